"""What the bodies of stage actors share: one run at a time for stages whose runs each wait on a
model, a run released to retry later, a run closed in a transaction of its own."""

import logging
from collections.abc import Callable

from models import db
from models.stage_run import StageRun
from workers import broker, ledger
from workers.stages import Stage

log = logging.getLogger(__name__)


def one_at_a_time(stage: Stage, run_ids: list[int], work: Callable[[StageRun], None]) -> None:
    """The body of an actor whose runs each wait on a model: claim the message's runs one at a
    time, then any other claimable run of the stage, until none is left (wake-ups are skipped
    while one waits, so one message may stand for many runs). Each claim wakes one more message,
    so idle worker threads join in and their waits on the model overlap. An unexpected error
    releases the run with its error, to back off and end ``failed`` like any other failure."""
    wanted = list(run_ids)
    while True:
        runs = ledger.claim(stage.name, wanted[:1], fill=1)
        del wanted[:1]
        if not runs:
            if wanted:
                continue
            return
        broker.send(stage, [], unless_waiting=True)
        try:
            work(runs[0])
        except Exception as exc:  # a defect or an outage: never a run left running for good
            if db.unavailable(exc):
                raise  # the lease brings the run back once the database does
            log.exception("%s run %d failed unexpectedly", stage.name, runs[0].id)
            retry_later(stage, runs[0], f"{type(exc).__name__}: {exc}")


def retry_later(stage: Stage, run: StageRun, error: str, reason: str | None = None) -> None:
    """After a transient failure of one run: back to pending with its backoff (``failed`` once out
    of attempts, ``reason`` then saying what kind), and a wake-up for when the backoff has passed."""
    with db.session() as s:
        retrying = ledger.release(s, [run], error, reason=reason)
    for wait, ids in retrying.items():
        broker.send(stage, ids, delay=wait)


def close(run: StageRun, status: str, **outcome) -> None:
    """Close one run in a transaction of its own (``outcome``: reason, result, error)."""
    with db.session() as s:
        ledger.finish(s, [run], status, **outcome)
