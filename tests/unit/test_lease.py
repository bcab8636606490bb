"""The lease heartbeat (``workers.ledger.claims.leased``), without a database: its renewal comes a
third of a lease after the block begins, later than these blocks last."""

import threading

from models.stage_run import StageRun
from workers.ledger.claims import leased


def heartbeats() -> int:
    return sum(1 for thread in threading.enumerate() if thread.name == "lease-heartbeat")


def test_a_lease_inside_a_lease_of_the_same_runs_adds_no_second_heartbeat():
    """A stage that leases its whole run and asks the model through a helper that leases the call
    (compaction): the inner block's exit must not wait on a heartbeat of its own, which may be
    waiting on the run's row (tests/e2e/test_compaction_kill.py hung there)."""
    run = StageRun(id=7, stage="compaction", subject="thread:1", idem_key="k")
    before = heartbeats()
    with leased([run]):
        assert heartbeats() == before + 1
        with leased([run]):
            assert heartbeats() == before + 1
        assert heartbeats() == before + 1
    other = StageRun(id=8, stage="compaction", subject="thread:2", idem_key="k2")
    with leased([run]), leased([run, other]):
        assert heartbeats() == before + 2  # a run it does not renew yet gets one


def test_the_heartbeat_stops_when_its_block_ends():
    run = StageRun(id=9, stage="compaction", subject="thread:3", idem_key="k3")
    before = heartbeats()
    with leased([run]):
        pass
    assert heartbeats() == before
