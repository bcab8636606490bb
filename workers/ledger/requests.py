"""Asking for work: a stage's run requested once per key, made pending again when the work is
wanted again, and an operator's retry (``failed`` and ``skipped`` runs; a succeeded run is a clear
no-op)."""

from collections.abc import Iterator
from dataclasses import dataclass

from sqlalchemy import update
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import Session, col, select

from models import db
from models.base import utcnow
from models.stage_run import DONE, FAILED, PENDING, RUNNING, SKIPPED, SUCCEEDED, StageRun
from models.stages import Stage
from workers import stages
from workers.ledger.chosen import BATCH, Chosen, among


def request(
    s: Session,
    stage: Stage,
    subject_id: int,
    version: str,
    params: dict,
    status: str = PENDING,
    revive: bool = False,
) -> StageRun:
    """The run of ``stage`` on that subject and version, written ``pending`` unless it exists: the
    same request made twice is one run (``succeeded`` records work done without the stage, such
    as a vector a compaction computed). With ``revive`` (a person asking again), a run that
    ``failed`` is made pending again; otherwise, and for a run pending, running or done, the run
    is answered as it stands. The caller wakes the stage after its commit when the run is pending."""
    now = utcnow()
    key = stage.key(subject_id, version)
    row = insert(StageRun).values(
        stage=stage.name,
        subject=stage.subject(subject_id),
        idem_key=key,
        status=status,
        attempts=0,
        params=params,
        created_at=now,
        updated_at=now,
        available_at=now,
    )
    s.exec(
        row.on_conflict_do_update(
            index_elements=["idem_key"],
            set_={
                "status": PENDING,
                "attempts": 0,
                "reason": None,
                "last_error": None,
                "result": None,
                "updated_at": now,
                "available_at": now,
            },
            where=col(StageRun.status) == FAILED,
        )
        if revive
        else row.on_conflict_do_nothing(index_elements=["idem_key"])
    )
    return s.exec(select(StageRun).where(col(StageRun.idem_key) == key)).one()


def wanted_again(
    s: Session, stage: Stage, subject_id: int, version: str, params: dict, revive: bool = False
) -> StageRun:
    """The run of work found still to do: requested as ``request`` does, and made pending again in
    the caller's transaction when it was done before (succeeded or skipped: the subject needs the
    work again, e.g. a month partition a late import made again, turns a host of the old build
    wrote during an upgrade). A failed run waits for an operator's retry instead, unless
    ``revive`` (a person asking again)."""
    run = request(s, stage, subject_id, version, params, revive=revive)
    if run.status in DONE:
        s.exec(
            update(StageRun)
            .where(col(StageRun.id) == run.id, col(StageRun.status).in_(DONE))
            .values(_again())
        )
        run.status = PENDING
    return run


@dataclass(frozen=True)
class RetryOutcome:
    run: StageRun
    requeued: bool
    message: str


def retry(run_id: int) -> RetryOutcome | None:
    """Operator retry: revive a ``failed`` or ``skipped`` run as ``pending`` (attempts reset).
    A run that succeeded, or is already pending or running, is left alone and says so."""
    with db.session() as s:
        run = s.exec(select(StageRun).where(col(StageRun.id) == run_id).with_for_update()).first()
        if run is None:
            return None
        if run.status == SUCCEEDED:
            return RetryOutcome(run, False, f"run {run_id} already succeeded; nothing to do")
        if run.status in (PENDING, RUNNING):
            return RetryOutcome(run, False, f"run {run_id} is already {run.status}")
        if run.stage not in stages.all_stages() or run.status not in stages.get(run.stage).retryable:
            return RetryOutcome(run, False, f"run {run_id} is {run.status}; its stage does not retry those")
        run.status, run.attempts, run.reason, run.claim = PENDING, 0, None, None
        run.updated_at = run.available_at = utcnow()
        s.add(run)
        return RetryOutcome(run, True, f"run {run_id} queued again")


def _again() -> dict:
    """A done run made pending again, as new: attempts reset, no reason or claim, claimable now."""
    now = utcnow()
    return {
        "status": PENDING,
        "attempts": 0,
        "reason": None,
        "result": None,
        "claim": None,
        "updated_at": now,
        "available_at": now,
    }


def revive(chosen: Chosen) -> list[int]:
    """Make the runs ``chosen`` selects (ids, of runs that are done: succeeded, skipped or failed)
    ``pending`` again with their attempts reset, in one statement; returns their ids. Bound
    ``chosen`` with a LIMIT: callers loop."""
    with db.session() as s:
        ids = s.exec(
            update(StageRun)
            .where(among(chosen), col(StageRun.status).in_(DONE + (FAILED,)))
            .values(_again())
            .returning(col(StageRun.id))
        ).scalars()
        return sorted(ids)


def retry_all(stage: str, status: str) -> Iterator[list[int]]:
    """Operator retry of every ``failed`` (or ``skipped``) run of a stage, ``BATCH`` at a time in
    id order: yields each batch's ids once they are ``pending`` again. A run that fails again while
    this goes on is not taken a second time."""
    if status not in (FAILED, SKIPPED):
        raise ValueError(f"only failed or skipped runs are retried, not {status}")
    after = 0
    while True:
        chosen = (
            select(col(StageRun.id))
            .where(col(StageRun.stage) == stage, col(StageRun.status) == status, col(StageRun.id) > after)
            .order_by(col(StageRun.id))
            .limit(BATCH)
            .with_for_update(skip_locked=True)
        )
        ids = revive(chosen)
        if not ids:
            return
        yield ids
        after = ids[-1]
