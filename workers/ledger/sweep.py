"""What the sweep finds: runs whose worker died on their last attempt (failed), and runs nobody
is working on (their message lost, their worker gone), to send again."""

from datetime import timedelta

from sqlalchemy import and_, func, or_, update
from sqlmodel import col, select

from models import db
from models.base import utcnow
from models.settings import get_settings
from models.stage_run import FAILED, PENDING, RUNNING, StageRun, with_failed_attempt
from workers.ledger.chosen import BATCH, among

LOST = "its worker was lost on every attempt"


def fail_abandoned(limit: int = BATCH) -> list[int]:
    """Fail runs whose lease ran out on their last attempt (the sweep calls this first)."""
    now = utcnow()
    chosen = (
        select(col(StageRun.id))
        .where(
            col(StageRun.status) == RUNNING,
            col(StageRun.lease_expires_at) < now,
            col(StageRun.attempts) >= get_settings().stage_max_attempts,
        )
        .order_by(col(StageRun.id))
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    with db.session() as s:
        ids = s.exec(
            update(StageRun)
            .where(among(chosen))
            .values(
                status=FAILED,
                last_error=func.concat(func.coalesce(col(StageRun.last_error) + "; ", ""), LOST),
                history=with_failed_attempt(LOST, now),
                finished_at=now,
                updated_at=now,
                lease_expires_at=None,
            )
            .returning(col(StageRun.id))
        ).scalars()
        return sorted(ids)


def stale(grace_seconds: int, after_id: int = 0, limit: int = BATCH) -> dict[str, list[int]]:
    """Runs nobody is working on, at most ``limit`` with ids past ``after_id``: ``pending`` and
    claimable for longer than the grace period (their message was lost or never sent) and
    ``running`` past their lease (their worker died). Touches them so the next sweep waits another
    grace period. Returns run ids by stage."""
    now = utcnow()
    cutoff = now - timedelta(seconds=grace_seconds)
    chosen = (
        select(col(StageRun.id))
        .where(
            col(StageRun.id) > after_id,
            or_(
                and_(
                    col(StageRun.status) == PENDING,
                    col(StageRun.updated_at) < cutoff,
                    col(StageRun.available_at) <= now,
                ),
                and_(col(StageRun.status) == RUNNING, col(StageRun.lease_expires_at) < now),
            ),
        )
        .order_by(col(StageRun.id))
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    with db.session() as s:
        rows = s.exec(
            update(StageRun)
            .where(among(chosen))
            .values(updated_at=now)
            .returning(col(StageRun.stage), col(StageRun.id))
        ).all()
    by_stage: dict[str, list[int]] = {}
    for stage, run_id in sorted(rows, key=lambda row: row[1]):
        by_stage.setdefault(stage, []).append(run_id)
    return by_stage
