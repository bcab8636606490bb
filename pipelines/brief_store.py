"""Briefs in the database: a revision written (screened, merged, fitted, kept), a save's course
settled from its windows (the callers hold the brief's row lock), and the reads and the delete of
session.brief_get, brief_list and brief_delete.

A reader sees the briefs stored under its prefix (``pipelines.briefs.bounds_prefix``; a
namespace-wide reader's is empty) with no "~" after it: a longer prefix is another token's
bounds."""

from datetime import datetime

from sqlmodel import Session, col, delete, func, select
from sqlmodel.sql.expression import SelectOfScalar

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


# --- reads and delete ------------------------------------------------------------------------------


def _visible(namespace: str, prefix: str) -> SelectOfScalar[SessionBrief]:
    """The reader's briefs of the namespace that a revision has written."""
    query = select(SessionBrief).where(
        col(SessionBrief.namespace) == namespace, col(SessionBrief.revision) > 0
    )
    if prefix:
        key = col(SessionBrief.brief_key)
        query = query.where(
            key.startswith(prefix, autoescape=True), func.strpos(func.substr(key, len(prefix) + 1), "~") == 0
        )
    return query


def named(s: Session, namespace: str, prefix: str, key: str) -> SessionBrief | None:
    """The brief of that stored key, if the reader sees it."""
    return s.exec(_visible(namespace, prefix).where(col(SessionBrief.brief_key) == key)).first()


def newest_of_session(s: Session, namespace: str, prefix: str, session_id: str) -> SessionBrief | None:
    """The newest brief the session wrote a revision of, that the reader sees."""
    wrote = select(col(BriefRevision.brief_id)).where(col(BriefRevision.session_id) == session_id)
    query = _visible(namespace, prefix).where(col(SessionBrief.id).in_(wrote))
    return s.exec(query.order_by(col(SessionBrief.updated_at).desc())).first()


def newest_of_project(s: Session, namespace: str, prefix: str, project: str) -> SessionBrief | None:
    query = _visible(namespace, prefix).where(col(SessionBrief.project) == project)
    return s.exec(query.order_by(col(SessionBrief.updated_at).desc())).first()


def revision_of(s: Session, brief_id: int, revision: int) -> BriefRevision | None:
    query = select(BriefRevision).where(
        col(BriefRevision.brief_id) == brief_id, col(BriefRevision.revision) == revision
    )
    return s.exec(query).first()


def listed(
    s: Session, namespace: str, prefix: str, written_by: str | None, project: str | None, limit: int
) -> list[SessionBrief]:
    """The briefs the reader sees, newest first: written by ``written_by`` and of ``project``, those
    given."""
    query = _visible(namespace, prefix)
    if written_by is not None:
        query = query.where(col(SessionBrief.written_by) == written_by)
    if project is not None:
        query = query.where(col(SessionBrief.project) == project)
    order = (col(SessionBrief.updated_at).desc(), col(SessionBrief.id).desc())
    return list(s.exec(query.order_by(*order).limit(limit)))


def forget(s: Session, namespace: str, key: str) -> bool:
    """Delete the brief of that stored key, with every revision; whether there was one."""
    gone = s.exec(
        delete(SessionBrief).where(
            col(SessionBrief.namespace) == namespace, col(SessionBrief.brief_key) == key
        )
    )
    return bool(gone.rowcount)
