"""What the periodic passes left on record, as ``loom passes`` and ``loom night-weave`` list it:
each pass's last firing (``schedules.record`` writes it) and the night weavings."""

from sqlmodel import col, select

from models import db
from models.memory import NightWeaving
from models.pass_run import PassRun


def last_firings() -> dict[str, PassRun]:
    """Each pass's last firing, by the pass's name (a pass that never fired has none)."""
    with db.session() as s:
        return {row.name: row for row in s.exec(select(PassRun))}


def night_weavings(limit: int) -> list[NightWeaving]:
    """The latest ``limit`` night weavings, newest first."""
    with db.session() as s:
        return list(
            s.exec(select(NightWeaving).order_by(col(NightWeaving.started_at).desc()).limit(limit)).all()
        )
