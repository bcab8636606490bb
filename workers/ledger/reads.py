"""Reading the ledger: runs by status, stage and time, newest first."""

from datetime import datetime

from sqlmodel import col, select

from models import db
from models.stage_run import StageRun


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
        query = query.where(col(StageRun.status) == status)
    if stage:
        query = query.where(col(StageRun.stage) == stage)
    if since:
        query = query.where(col(StageRun.created_at) >= since)
    with db.session() as s:
        return list(s.exec(query))


def runs_by_id(run_ids: list[int]) -> list[StageRun]:
    with db.session() as s:
        return list(s.exec(select(StageRun).where(col(StageRun.id).in_(run_ids))))


def get(run_id: int) -> StageRun | None:
    with db.session() as s:
        return s.get(StageRun, run_id)
