"""Briefs in the database: a revision written (screened, merged, fitted, kept), and a save's
course settled from its windows. The callers hold the brief's row lock."""

from datetime import datetime

from sqlmodel import Session, col, select

from models.base import stored
from models.brief import (
    FAILED,
    NOT_REVISED,
    PENDING,
    REVISED,
    BriefRevision,
    BriefSave,
    BriefWindow,
    SessionBrief,
)
from pipelines import briefs


def locked(s: Session, brief_id: int) -> SessionBrief:
    return s.exec(select(SessionBrief).where(col(SessionBrief.id) == brief_id).with_for_update()).one()


def revise(
    s: Session,
    brief: SessionBrief,
    update: dict,
    author: str,
    session_id: str | None,
    save_id: int,
    now: datetime,
) -> list[str]:
    """Write ``update`` over the brief as its next revision (kept in the revisions); the names of
    the sections refused because they read as high."""
    kept, refused = briefs.screened(update)
    brief.sections = briefs.fitted(briefs.merged(brief.sections, kept))
    brief.revision += 1
    brief.author = author
    brief.session_id = session_id
    brief.updated_at = now
    s.add(brief)
    assert brief.id is not None  # a stored brief
    s.add(
        BriefRevision(
            brief_id=brief.id,
            revision=brief.revision,
            sections=brief.sections,
            author=author,
            session_id=session_id,
            save_id=save_id,
            created_at=now,
        )
    )
    return refused


def windows(s: Session, save_id: int) -> list[BriefWindow]:
    query = select(BriefWindow).where(col(BriefWindow.save_id) == save_id).order_by(col(BriefWindow.position))
    return list(s.exec(query))


def settle(s: Session, save: BriefSave, now: datetime) -> None:
    """The save's status from its windows': pending while one is; else revised when one was,
    failed when one failed and none was, not revised otherwise."""
    statuses = {window.status for window in windows(s, stored(save.id))}
    if PENDING in statuses:
        status = PENDING
    elif REVISED in statuses:
        status = REVISED
    elif FAILED in statuses:
        status = FAILED
    else:
        status = NOT_REVISED
    if status != save.status:
        save.status = status
        save.finished_at = None if status == PENDING else now
        s.add(save)
