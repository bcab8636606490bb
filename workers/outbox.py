"""Sending runs to their actors after the write that created them has committed.

A send that fails (Redis down) loses nothing: the run stays ``pending`` in the ledger and the
scheduler's sweep sends it again once the broker answers.
"""

from models.stages import Stage
from workers import broker, ledger, stages


def wake(stage: Stage, run_ids: list[int]) -> bool:
    """After a write committed new runs: make sure a message of the stage will claim them
    (an actor's claim fills its batch with other pending runs). False when the broker is down."""
    return broker.send(stage, run_ids, unless_waiting=True)


def send(stage: Stage, run_ids: list[int]) -> bool:
    """Enqueue these runs by id (in the stage's chunks); False when the broker refused one (the
    rest then wait for the sweep too)."""
    return all(
        broker.send(stage, run_ids[start : start + stage.chunk])
        for start in range(0, len(run_ids), stage.chunk)
    )


def sweep(grace_seconds: int) -> list[int]:
    """Fail the runs whose worker died holding them on their last attempt, then re-send runs
    nobody is working on (see ``ledger.stale``), a bounded batch at a time. While
    the broker does not answer nothing is touched (a touched run waits another grace period), and
    a send that fails ends the pass. Returns the runs sent."""
    if not broker.answers():
        return []
    ledger.fail_abandoned()
    sent: list[int] = []
    after_id = 0
    while by_stage := ledger.stale(grace_seconds, after_id):
        declared = stages.all_stages()
        for name, run_ids in by_stage.items():
            if name in declared:
                if not send(declared[name], run_ids):
                    return sent
                sent += run_ids
        after_id = max(max(ids) for ids in by_stage.values())
    return sent
