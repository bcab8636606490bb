"""The ledger counted: each stage's runs by status (``runs.list``), and the status snapshot's
database read (``ops.status``): that count, the oldest pending run of each stage, the turns
embedded lately; bounded by a statement timeout."""

from collections.abc import Iterable

from sqlalchemy import Connection, Row, func
from sqlmodel import col, select

from models import db
from models.queries import stage_runs as queries
from models.stage_run import STATUSES, StageRun


def by_stage(counted: Iterable[tuple[str, str, int]]) -> dict[str, dict[str, int]]:
    """(stage, status, n) rows as each stage's counts, every status present (0 when none)."""
    counts: dict[str, dict[str, int]] = {}
    for stage, status, n in counted:
        counts.setdefault(stage, dict.fromkeys(STATUSES, 0))[status] = n
    return counts


def counts() -> dict[str, dict[str, int]]:
    """Every stage's runs counted by status (an index-only scan of ix_stage_runs_status_stage)."""
    with db.session() as s:
        counted = s.exec(
            select(col(StageRun.stage), col(StageRun.status), func.count()).group_by(
                col(StageRun.stage), col(StageRun.status)
            )
        ).all()
    return by_stage(counted)


def bound(conn: Connection, seconds: float) -> None:
    """Bound the statements that follow in this transaction."""
    conn.execute(queries.STATEMENT_TIMEOUT, {"ms": str(int(seconds * 1000))})


def snapshot(conn: Connection) -> Row:
    """(counts by stage and status, oldest pending age by stage, turns embedded in 60 s and 300 s)."""
    return conn.execute(queries.SNAPSHOT).one()
