"""The stage ledger: claiming, finishing, releasing and retrying runs.

Claims are ``WITH chosen AS MATERIALIZED (SELECT … FOR UPDATE SKIP LOCKED) UPDATE …``: two
workers never hold the same run. A claimed run carries a short lease that its worker renews while
it works (``leased``), so a run whose worker was killed is claimed again within one lease. A
released run waits out its backoff (``available_at``) before any claim takes it, so an outage does
not burn its attempts.
Every statement that may touch many runs works in bounded batches.
"""

import json
import logging
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import and_, case, func, or_, text, update
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import Session, col, select
from sqlmodel.sql.expression import Select

from models import db
from models.base import utcnow
from models.settings import get_settings
from models.stage_run import DONE, FAILED, PENDING, RUNNING, SKIPPED, SUCCEEDED, StageRun
from workers import stages

log = logging.getLogger(__name__)

BATCH = 500  # runs a sweep or an operator retry touches per statement


def _claimable(now: datetime):
    """Pending past its backoff, or running past its lease with attempts left (a run whose worker
    died holding it on its last attempt is failed by ``fail_abandoned`` instead: a run that kills
    its worker must not be claimed forever)."""
    return or_(
        and_(StageRun.status == PENDING, StageRun.available_at <= now),
        and_(
            StageRun.status == RUNNING,
            StageRun.lease_expires_at < now,
            StageRun.attempts < get_settings().stage_max_attempts,
        ),
    )


def fail_abandoned(limit: int = BATCH) -> list[int]:
    """Fail runs whose lease ran out on their last attempt (the sweep calls this first)."""
    now = utcnow()
    chosen = (
        select(StageRun.id)
        .where(
            StageRun.status == RUNNING,
            StageRun.lease_expires_at < now,
            StageRun.attempts >= get_settings().stage_max_attempts,
        )
        .order_by(StageRun.id)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    with db.session() as s:
        ids = s.exec(
            update(StageRun)
            .where(_among(chosen))
            .values(
                status=FAILED,
                last_error=func.concat(
                    func.coalesce(StageRun.last_error + "; ", ""), "its worker was lost on every attempt"
                ),
                finished_at=now,
                updated_at=now,
                lease_expires_at=None,
            )
            .returning(StageRun.id)
        ).scalars()
        return sorted(ids)


def _among(chosen: Select):
    """``id IN`` the runs ``chosen`` locks, selected once. Not a plain ``IN (SELECT … LIMIT n FOR
    UPDATE SKIP LOCKED)``: a plan may scan that subquery again for every row of the outer table, and
    each rescan skips the rows this statement already changed and locks n more, so a claim, sweep or
    retry would take every matching run instead of n. A materialised CTE is evaluated exactly once."""
    once = chosen.cte("chosen").prefix_with("MATERIALIZED")
    return col(StageRun.id).in_(select(once.c.id))


def claim(stage: str, run_ids: list[int], fill: int) -> list[StageRun]:
    """Claim the given runs first and, up to ``fill`` in all, other claimable runs of the stage, so
    one model call serves many messages. Returns the claimed runs (attempts already counted), all
    carrying this claim's token: only the holder of a claim may renew, finish or release its runs,
    so a worker that lost its lease (a database outage outlasted it) cannot touch a run another
    worker claimed since."""
    now = utcnow()
    wanted = col(StageRun.id).in_(run_ids)
    chosen = (
        select(StageRun.id)
        .where(StageRun.stage == stage, _claimable(now))
        .order_by(case((wanted, 0), else_=1), StageRun.id)
        .limit(fill)
        .with_for_update(skip_locked=True)
    )
    lease = now + timedelta(seconds=get_settings().stage_lease_seconds)
    with db.session() as s:
        claimed = s.exec(
            update(StageRun)
            .where(_among(chosen))
            .values(
                status=RUNNING,
                attempts=StageRun.attempts + 1,
                started_at=now,
                updated_at=now,
                lease_expires_at=lease,
                claim=uuid.uuid4().hex,
            )
            .returning(StageRun)
        ).scalars()
        return sorted(claimed, key=lambda run: run.id)


def _held(runs: list[StageRun]):
    """The runs, while still running under the claim they were taken with."""
    by_claim: dict[str | None, list[int]] = {}
    for run in runs:
        by_claim.setdefault(run.claim, []).append(run.id)
    return and_(
        StageRun.status == RUNNING,
        or_(*(and_(StageRun.claim == token, col(StageRun.id).in_(ids)) for token, ids in by_claim.items())),
    )


def request(
    s: Session,
    stage: stages.Stage,
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
            where=StageRun.status == FAILED,
        )
        if revive
        else row.on_conflict_do_nothing(index_elements=["idem_key"])
    )
    return s.exec(select(StageRun).where(StageRun.idem_key == key)).one()


def wanted_again(
    s: Session, stage: stages.Stage, subject_id: int, version: str, params: dict, revive: bool = False
) -> StageRun:
    """The run of work found still to do: requested as ``request`` does, and made pending again in
    the caller's transaction when it was done before (succeeded or skipped: the subject needs the
    work again, e.g. a month partition a late import made again, turns a host of the old build
    wrote during an upgrade). A failed run waits for an operator's retry instead, unless
    ``revive`` (a person asking again)."""
    run = request(s, stage, subject_id, version, params, revive=revive)
    if run.status in DONE:
        s.exec(update(StageRun).where(StageRun.id == run.id, col(StageRun.status).in_(DONE)).values(_again()))
        run.status = PENDING
    return run


ADD_TO_RESULT = text("""
UPDATE stage_runs
SET result = coalesce(result, '{}'::jsonb) || (
    SELECT coalesce(jsonb_object_agg(key, coalesce((result ->> key)::bigint, 0) + value::bigint), '{}')
    FROM jsonb_each_text(CAST(:counts AS jsonb))
)
WHERE id = :id
""")


def add_to_result(s: Session, run_id: int, counts: dict[str, int]) -> None:
    """Add ``counts`` to the run's ``result`` in the caller's transaction: a stage that works in
    batches counts each batch with the batch, so a run killed midway and finished by the next
    delivery still reports the whole."""
    if any(counts.values()):
        s.execute(ADD_TO_RESULT, {"counts": json.dumps(counts), "id": run_id})


def finish(
    s: Session,
    runs: list[StageRun],
    status: str,
    reason: str | None = None,
    result: dict | None = None,
    error: str | None = None,
    keep_result: bool = False,
) -> int:
    """Close claimed runs that are still held: a late duplicate cannot overwrite a newer outcome.
    Returns how many were closed (a stage whose writes must stand or fall with its claim rolls
    back on fewer). ``keep_result``: the result is the counts the run added as it went
    (``add_to_result``)."""
    if not runs:
        return 0
    now = utcnow()
    closed = s.exec(
        update(StageRun)
        .where(_held(runs))
        .values(
            status=status,
            reason=reason,
            **({} if keep_result else {"result": result}),
            finished_at=now,
            updated_at=now,
            lease_expires_at=None,
            **({"last_error": error[:4000]} if error else {}),
        )
    )
    return closed.rowcount


def extend(runs: list[StageRun]) -> None:
    """Renew the lease of runs this claim still holds."""
    now = utcnow()
    with db.session() as s:
        s.exec(
            update(StageRun)
            .where(_held(runs))
            .values(lease_expires_at=now + timedelta(seconds=get_settings().stage_lease_seconds))
        )


@contextmanager
def leased(runs: list[StageRun]) -> Iterator[None]:
    """Renew the runs' lease every third of it while the block works, however long the model takes;
    a worker killed mid-block stops renewing, and its runs are claimable one lease later."""
    stop = threading.Event()

    def renew() -> None:
        while not stop.wait(get_settings().stage_lease_seconds / 3):
            try:
                extend(runs)
            except Exception as exc:  # the database may be restarting: the next beat tries again
                log.warning("could not renew the lease of %d runs: %s", len(runs), exc)

    beat = threading.Thread(target=renew, name="lease-heartbeat", daemon=True)
    beat.start()
    try:
        yield
    finally:
        stop.set()
        beat.join()


def backoff(attempts: int) -> timedelta:
    """How long a run released after its ``attempts``-th attempt waits: doubling from the minimum."""
    settings = get_settings()
    ms = min(settings.stage_min_backoff_ms * 2 ** max(attempts - 1, 0), settings.stage_max_backoff_ms)
    return timedelta(milliseconds=ms)


def release(
    s: Session, runs: list[StageRun], error: str, reason: str | None = None
) -> dict[timedelta, list[int]]:
    """After a transient failure: runs with attempts left go back to ``pending``, claimable once
    their backoff has passed; the rest are ``failed``, with ``reason`` (what kind of failure)
    when given. Returns the retrying runs' ids by backoff
    (runs of one claim share their attempts, so this is one group as a rule)."""
    limit = get_settings().stage_max_attempts
    now = utcnow()
    retrying: dict[timedelta, list[StageRun]] = {}
    for run in runs:
        if run.attempts < limit:
            retrying.setdefault(backoff(run.attempts), []).append(run)
    failed = [run for run in runs if run.attempts >= limit]
    groups = [(PENDING, now + wait, group) for wait, group in retrying.items()] + [(FAILED, now, failed)]
    for status, available_at, group in groups:
        if group:
            s.exec(
                update(StageRun)
                .where(_held(group))
                .values(
                    status=status,
                    last_error=error[:4000],
                    reason=reason,
                    updated_at=now,
                    lease_expires_at=None,
                    available_at=available_at,
                )
            )
    return {wait: [run.id for run in group] for wait, group in retrying.items()}


@dataclass(frozen=True)
class RetryOutcome:
    run: StageRun
    requeued: bool
    message: str


def retry(run_id: int) -> RetryOutcome | None:
    """Operator retry: revive a ``failed`` or ``skipped`` run as ``pending`` (attempts reset).
    A run that succeeded, or is already pending or running, is left alone and says so."""
    with db.session() as s:
        run = s.exec(select(StageRun).where(StageRun.id == run_id).with_for_update()).first()
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


def revive(chosen: Select) -> list[int]:
    """Make the runs ``chosen`` selects (ids, of runs that are done: succeeded, skipped or failed)
    ``pending`` again with their attempts reset, in one statement; returns their ids. Bound
    ``chosen`` with a LIMIT: callers loop."""
    with db.session() as s:
        ids = s.exec(
            update(StageRun)
            .where(_among(chosen), col(StageRun.status).in_(DONE + (FAILED,)))
            .values(_again())
            .returning(StageRun.id)
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
            select(StageRun.id)
            .where(StageRun.stage == stage, StageRun.status == status, StageRun.id > after)
            .order_by(StageRun.id)
            .limit(BATCH)
            .with_for_update(skip_locked=True)
        )
        ids = revive(chosen)
        if not ids:
            return
        yield ids
        after = ids[-1]


def select_runs(
    status: str | None = None,
    stage: str | None = None,
    since: datetime | None = None,
    limit: int = 100,
    before_id: int | None = None,
) -> list[StageRun]:
    """Runs newest first, by status, stage, creation time; ``before_id`` pages on (older runs)."""
    query = select(StageRun).order_by(col(StageRun.id).desc()).limit(limit)
    if before_id:
        query = query.where(col(StageRun.id) < before_id)
    if status:
        query = query.where(StageRun.status == status)
    if stage:
        query = query.where(StageRun.stage == stage)
    if since:
        query = query.where(StageRun.created_at >= since)
    with db.session() as s:
        return list(s.exec(query))


def runs_by_id(run_ids: list[int]) -> list[StageRun]:
    with db.session() as s:
        return list(s.exec(select(StageRun).where(col(StageRun.id).in_(run_ids))))


def get(run_id: int) -> StageRun | None:
    with db.session() as s:
        return s.get(StageRun, run_id)


def stale(grace_seconds: int, after_id: int = 0, limit: int = BATCH) -> dict[str, list[int]]:
    """Runs nobody is working on, at most ``limit`` with ids past ``after_id``: ``pending`` and
    claimable for longer than the grace period (their message was lost or never sent) and
    ``running`` past their lease (their worker died). Touches them so the next sweep waits another
    grace period. Returns run ids by stage."""
    now = utcnow()
    cutoff = now - timedelta(seconds=grace_seconds)
    chosen = (
        select(StageRun.id)
        .where(
            StageRun.id > after_id,
            or_(
                and_(StageRun.status == PENDING, StageRun.updated_at < cutoff, StageRun.available_at <= now),
                and_(StageRun.status == RUNNING, StageRun.lease_expires_at < now),
            ),
        )
        .order_by(StageRun.id)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    with db.session() as s:
        rows = s.exec(
            update(StageRun)
            .where(_among(chosen))
            .values(updated_at=now)
            .returning(StageRun.stage, StageRun.id)
        ).all()
    by_stage: dict[str, list[int]] = {}
    for stage, run_id in sorted(rows, key=lambda row: row[1]):
        by_stage.setdefault(stage, []).append(run_id)
    return by_stage
