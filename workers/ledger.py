"""The stage ledger: claiming, finishing, releasing and retrying runs.

Claims are ``UPDATE … WHERE id IN (SELECT … FOR UPDATE SKIP LOCKED)``: two workers never hold the
same run, and a run whose lease expired (its worker was killed) can be claimed again.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import and_, case, or_, update
from sqlmodel import Session, col, select

from models import db
from models.base import utcnow
from models.settings import get_settings
from models.stage_run import FAILED, PENDING, RUNNING, SUCCEEDED, StageRun


def _claimable(now: datetime):
    return or_(
        StageRun.status == PENDING,
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


def release(s: Session, runs: list[StageRun], error: str) -> tuple[list[int], list[int]]:
    """After a transient failure: runs with attempts left go back to ``pending``, the rest are
    ``failed``. Returns (retrying ids, failed ids)."""
    limit = get_settings().stage_max_attempts
    retrying = [run.id for run in runs if run.attempts < limit]
    failed = [run.id for run in runs if run.attempts >= limit]
    now = utcnow()
    for ids, status in ((retrying, PENDING), (failed, FAILED)):
        if ids:
            s.exec(
                update(StageRun)
                .where(col(StageRun.id).in_(ids), StageRun.status == RUNNING)
                .values(status=status, last_error=error[:4000], updated_at=now, lease_expires_at=None)
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
        run.status, run.attempts, run.reason, run.updated_at = PENDING, 0, None, utcnow()
        s.add(run)
        return RetryOutcome(run, True, f"run {run_id} queued again")


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


def stale(grace_seconds: int) -> dict[str, list[int]]:
    """Runs nobody is working on: ``pending`` longer than the grace period (their message was lost
    or never sent) and ``running`` past their lease (their worker died). Touches them so the next
    sweep waits another grace period. Returns run ids by stage."""
    now = utcnow()
    cutoff = now - timedelta(seconds=grace_seconds)
    with db.session() as s:
        rows = s.exec(
            update(StageRun)
            .where(
                or_(
                    and_(StageRun.status == PENDING, StageRun.updated_at < cutoff),
                    and_(StageRun.status == RUNNING, StageRun.lease_expires_at < now),
                )
            )
            .values(updated_at=now)
            .returning(StageRun.stage, StageRun.id)
        ).all()
    by_stage: dict[str, list[int]] = {}
    for stage, run_id in rows:
        by_stage.setdefault(stage, []).append(run_id)
    return by_stage
