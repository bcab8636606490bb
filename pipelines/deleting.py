"""Deleting a thread's turns (conversation.delete): one agent's copies, or every agent's, are
tombstoned with their embedding rows in one transaction; once no live turn of any agent is left the
thread itself is deleted, and its id is never taken again."""

from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session, col, func, select, update

from models.conversation import Thread, Turn
from pipelines import contexts, retire


@dataclass(frozen=True)
class Deleted:
    turns: int  # how many turns were tombstoned
    thread_deleted: bool  # no live turn is left: the thread is gone


def delete(s: Session, namespace: str, thread_id: str, agent: str | None, now: datetime) -> Deleted | None:
    """Tombstone the thread's live turns (``agent``'s copies, or every agent's with None) in the
    caller's transaction; None when there is no such thread. A thread deleted before answers as
    done, so a retried delete succeeds."""
    # The thread row, locked (appends and a concurrent delete wait on it), deleted or not.
    thread = s.exec(
        select(Thread)
        .where(col(Thread.namespace) == namespace, col(Thread.thread_id) == thread_id)
        .with_for_update()
    ).first()
    if thread is None:
        return None
    if thread.deleted_at is not None:
        return Deleted(turns=0, thread_deleted=True)
    live = [
        col(Turn.namespace) == namespace,
        col(Turn.thread_id) == thread_id,
        col(Turn.deleted_at).is_(None),
    ]
    doomed = live + ([col(Turn.agent) == agent] if agent else [])
    turns = s.exec(update(Turn).where(*doomed).values(deleted_at=now)).rowcount
    retire.settle_rows(s, namespace, thread_id, now)
    contexts.rebuild(s, [(namespace, thread_id)])  # another agent's turns may hold their words
    remaining = s.exec(select(col(Turn.id)).where(*live).limit(1)).first()
    s.exec(
        update(Thread)
        .where(col(Thread.id) == thread.id)
        .values(
            deleted_at=now if remaining is None else None,
            turn_count=func.greatest(Thread.turn_count - turns, 0),
        )
    )
    return Deleted(turns=turns, thread_deleted=remaining is None)
