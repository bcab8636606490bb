"""The stage ledger: claiming, finishing, releasing and retrying runs.

Claims are ``UPDATE … WHERE id IN (SELECT … FOR UPDATE SKIP LOCKED)``: two workers never hold the
same run. A claimed run carries a short lease that its worker renews while it works (``leased``),
so a run whose worker was killed is claimed again within one lease. A released run waits out its
backoff (``available_at``) before any claim takes it, so an outage does not burn its attempts.
Every statement that may touch many runs works in bounded batches.
"""

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import and_, case, or_, update
from sqlmodel import Session, col, select
from sqlmodel.sql.expression import Select

from models import db
from models.base import utcnow
from models.settings import get_settings
from models.stage_run import DONE, FAILED, PENDING, RUNNING, SKIPPED, SUCCEEDED, StageRun

log = logging.getLogger(__name__)

BATCH = 500  # runs a sweep or an operator retry touches per statement


def _claimable(now: datetime):
    return or_(
        and_(StageRun.status == PENDING, StageRun.available_at <= now),
        and_(StageRun.status == RUNNING, StageRun.lease_expires_at < now),
    )


def claim(stage: str, run_ids: list[int], fill: int) -> list[StageRun]:
    """Claim the given runs and, up to ``fill`` in all, other claimable runs of the stage, so one
    model call serves many messages. Returns the claimed runs (attempts already counted)."""
    now = utcnow()
    wanted = col(StageRun.id).in_(run_ids)
    chosen = (
        select(StageRun.id)
        .where(StageRun.stage == stage, _claimable(now))
        .order_by(case((wanted, 0), else_=1), StageRun.id)
        .limit(max(fill, len(run_ids)))
        .with_for_update(skip_locked=True)
    )
    lease = now + timedelta(seconds=get_settings().stage_lease_seconds)
    with db.session() as s:
        claimed = s.exec(
            update(StageRun)
            .where(col(StageRun.id).in_(chosen.scalar_subquery()))
            .values(
                status=RUNNING,
                attempts=StageRun.attempts + 1,
                started_at=now,
                updated_at=now,
                lease_expires_at=lease,
            )
            .returning(StageRun)
        ).scalars()
        return sorted(claimed, key=lambda run: run.id)


def finish(s: Session, run_ids: list[int], status: str, reason: str | None = None) -> None:
    """Close claimed runs; only a run still ``running`` is closed, so a late duplicate cannot
    overwrite a newer outcome."""
    if not run_ids:
        return
    now = utcnow()
    s.exec(
        update(StageRun)
        .where(col(StageRun.id).in_(run_ids), StageRun.status == RUNNING)
        .values(status=status, reason=reason, finished_at=now, updated_at=now, lease_expires_at=None)
    )


def extend(run_ids: list[int]) -> None:
    """Renew the lease of runs this worker still holds."""
    now = utcnow()
    with db.session() as s:
        s.exec(
            update(StageRun)
            .where(col(StageRun.id).in_(run_ids), StageRun.status == RUNNING)
            .values(lease_expires_at=now + timedelta(seconds=get_settings().stage_lease_seconds))
        )


@contextmanager
def leased(runs: list[StageRun]) -> Iterator[None]:
    """Renew the runs' lease every third of it while the block works, however long the model takes;
    a worker killed mid-block stops renewing, and its runs are claimable one lease later."""
    ids = [run.id for run in runs]
    stop = threading.Event()

    def renew() -> None:
        while not stop.wait(get_settings().stage_lease_seconds / 3):
            try:
                extend(ids)
            except Exception as exc:  # the database may be restarting: the next beat tries again
                log.warning("could not renew the lease of %d runs: %s", len(ids), exc)

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


def release(s: Session, runs: list[StageRun], error: str) -> tuple[list[StageRun], list[StageRun]]:
    """After a transient failure: runs with attempts left go back to ``pending``, claimable once
    their backoff has passed; the rest are ``failed``. Returns (retrying, failed)."""
    limit = get_settings().stage_max_attempts
    retrying = [run for run in runs if run.attempts < limit]
    failed = [run for run in runs if run.attempts >= limit]
    now = utcnow()
    for run in retrying:
        run.available_at = now + backoff(run.attempts)
    for group, status in ((retrying, PENDING), (failed, FAILED)):
        for available_at in {run.available_at for run in group}:
            ids = [run.id for run in group if run.available_at == available_at]
            s.exec(
                update(StageRun)
                .where(col(StageRun.id).in_(ids), StageRun.status == RUNNING)
                .values(
                    status=status,
                    last_error=error[:4000],
                    updated_at=now,
                    lease_expires_at=None,
                    available_at=available_at,
                )
            )
    return retrying, failed


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
        run.status, run.attempts, run.reason = PENDING, 0, None
        run.updated_at = run.available_at = utcnow()
        s.add(run)
        return RetryOutcome(run, True, f"run {run_id} queued again")


def revive(chosen: Select) -> list[int]:
    """Make the runs ``chosen`` selects (ids, of runs that are done: succeeded, skipped or failed)
    ``pending`` again with their attempts reset, in one statement; returns their ids. Bound
    ``chosen`` with a LIMIT: callers loop."""
    now = utcnow()
    with db.session() as s:
        ids = s.exec(
            update(StageRun)
            .where(col(StageRun.id).in_(chosen.scalar_subquery()), col(StageRun.status).in_(DONE + (FAILED,)))
            .values(status=PENDING, attempts=0, reason=None, updated_at=now, available_at=now)
            .returning(StageRun.id)
        ).scalars()
        return sorted(ids)


def retry_all(stage: str, status: str) -> Iterator[list[int]]:
    """Operator retry of every ``failed`` (or ``skipped``) run of a stage, ``BATCH`` at a time:
    yields each batch's ids once they are ``pending`` again."""
    assert status in (FAILED, SKIPPED)
    chosen = (
        select(StageRun.id)
        .where(StageRun.stage == stage, StageRun.status == status)
        .order_by(StageRun.id)
        .limit(BATCH)
        .with_for_update(skip_locked=True)
    )
    while ids := revive(chosen):
        yield ids


def select_runs(
    status: str | None = None, stage: str | None = None, since: datetime | None = None, limit: int = 100
) -> list[StageRun]:
    query = select(StageRun).order_by(col(StageRun.id).desc()).limit(limit)
    if status:
        query = query.where(StageRun.status == status)
    if stage:
        query = query.where(StageRun.stage == stage)
    if since:
        query = query.where(StageRun.created_at >= since)
    with db.session() as s:
        return list(s.exec(query))


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
            .where(col(StageRun.id).in_(chosen.scalar_subquery()))
            .values(updated_at=now)
            .returning(StageRun.stage, StageRun.id)
        ).all()
    by_stage: dict[str, list[int]] = {}
    for stage, run_id in sorted(rows, key=lambda row: row[1]):
        by_stage.setdefault(stage, []).append(run_id)
    return by_stage
