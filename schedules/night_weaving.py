"""The nightly pass (and `loom night-weave`): a night weaving recorded, and a night weaving run for
each LoomSession awaiting the night."""

from uuid import UUID, uuid4

from sqlmodel import col, select

from models import db
from models.base import stored, utcnow
from models.memory import LoomSession, NightWeaving
from models.stage_run import PENDING
from models.stages import NIGHT_WEAVING
from workers import ledger, outbox


def weave_night(loom_id: UUID | None = None, by: str = "scheduler") -> list[int]:
    """The nightly pass: a night weaving recorded, and a run for each session awaiting the night
    (of one loom, or of every loom). Returns the runs sent."""
    now = utcnow()
    with db.session() as s:
        weaving = NightWeaving(id=uuid4(), loom_id=loom_id, started_at=now, by=by)
        s.add(weaving)
        query = select(
            col(LoomSession.row_id),
            col(LoomSession.consolidated_up_to_sequence),
            col(LoomSession.last_sequence),
        ).where(col(LoomSession.awaiting_night))
        if loom_id is not None:
            query = query.where(col(LoomSession.loom_id) == loom_id)
        params = {"night_weaving_id": str(weaving.id)}
        # Keyed by the range the night is to read: a session consolidated only in part (more turns
        # than a night's share) gets the next night's run for the rest.
        runs = [
            ledger.request(s, NIGHT_WEAVING, stored(row_id), f"{done}-{last}", {**params, "up_to": last})
            for row_id, done, last in s.exec(query.order_by(col(LoomSession.row_id))).all()
        ]
        pending = [stored(run.id) for run in runs if run.status == PENDING]
        weaving.sessions = len(pending)
        if not pending:
            weaving.finished_at = now
        s.add(weaving)
    if pending:
        outbox.send(NIGHT_WEAVING, pending)
    return pending
