"""Recording a pass's firing: when it started and ended, how many runs it sent, or its error."""

import contextlib

from sqlalchemy import update
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import col

from models import db
from models.base import utcnow
from models.pass_run import PassRun
from models.queries import passes as queries
from schedules.registry import Pass

# The advisory lock class of the passes (models.queries.passes.TRY_LOCK): one firing of a pass at a
# time, across processes: an operator's Run now and the scheduler's, or two operators'.
PASS_LOCK_CLASS = 7337


class PassBusy(Exception):
    """Another firing of the pass is under way."""


def fire(p: Pass, by: str) -> list[int]:
    """Run the pass, recording the firing (``by``: scheduler or operator); returns the runs sent.
    Raises PassBusy while another process fires it (the lock goes with its connection)."""
    with db.autocommit() as conn:
        key = (PASS_LOCK_CLASS, p.name)
        locked = conn.execute(queries.TRY_LOCK, key).fetchone()
        assert locked is not None  # a SELECT of one value answers one row
        if not locked[0]:
            raise PassBusy(p.name)
        try:
            return _fire(p, by)
        finally:
            conn.execute(queries.UNLOCK, key)


def _fire(p: Pass, by: str) -> list[int]:
    started = {"started_at": utcnow(), "finished_at": None, "sent": None, "error": None, "by": by}
    with db.session() as s:
        s.exec(
            insert(PassRun)
            .values(name=p.name, **started)
            .on_conflict_do_update(index_elements=["name"], set_=started)
        )
    try:
        sent = p.run()
    except Exception as exc:
        with contextlib.suppress(Exception):  # the error may be that the database is down
            _finish(p.name, sent=None, error=f"{type(exc).__name__}: {exc}"[:2000])
        raise
    _finish(p.name, sent=len(sent), error=None)
    return sent


def _finish(name: str, sent: int | None, error: str | None) -> None:
    with db.session() as s:
        s.exec(
            update(PassRun)
            .where(col(PassRun.name) == name)
            .values(finished_at=utcnow(), sent=sent, error=error)
        )
