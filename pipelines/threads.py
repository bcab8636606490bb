"""A conversation thread's row and its reads: open one, find the live one, change it, list a
namespace's threads with each one's newest turn, and read its turns a page at a time. Each
function works in the caller's Session (the op's transaction)."""

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, exists, or_, true, tuple_
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import Session, col, select

from models.base import utcnow
from models.conversation import Thread, Turn


def open_thread(
    s: Session, namespace: str, thread_id: str, agent: str, title: str | None, meta: dict, run_id: str | None
) -> tuple[Thread, bool]:
    """The thread, opened unless a thread of that id exists (deleted or not: a deleted thread's id
    is never taken again), and whether this call opened it."""
    created = s.scalar(
        insert(Thread)
        .values(
            namespace=namespace,
            thread_id=thread_id,
            agent=agent,
            title=title,
            meta=meta,
            run_id=run_id,
            turn_count=0,
            created_at=utcnow(),
            last_turn_at=utcnow(),
        )
        .on_conflict_do_nothing(index_elements=["namespace", "thread_id"])
        .returning(col(Thread.id))
    )
    thread = s.exec(
        select(Thread).where(col(Thread.namespace) == namespace, col(Thread.thread_id) == thread_id)
    ).one()
    return thread, created is not None


def find(s: Session, namespace: str, thread_id: str, lock: bool = False) -> Thread | None:
    """The live thread (locked for the transaction with ``lock``); None for one that does not
    exist or was deleted."""
    query = select(Thread).where(
        col(Thread.namespace) == namespace,
        col(Thread.thread_id) == thread_id,
        col(Thread.deleted_at).is_(None),
    )
    return s.exec(query.with_for_update() if lock else query).first()


def change(s: Session, thread: Thread, changes: dict[str, Any]) -> None:
    """Set the thread's ``title``, ``run_id`` or ``metadata`` (replaced whole) that ``changes``
    holds; the others stay as they are."""
    for field in changes.keys() & {"title", "run_id"}:
        setattr(thread, field, changes[field])
    if "metadata" in changes:
        thread.meta = changes["metadata"] or {}
    s.add(thread)
    s.flush()


@dataclass(frozen=True)
class Newest:
    """A thread's newest live turn, as a listing shows it."""

    msg_id: str
    role: str
    ts: datetime
    content: str


def listed(
    s: Session, namespace: str, agent: str | None, window_days: int | None, offset: int, limit: int
) -> list[tuple[Thread, Newest | None]]:
    """A page of the namespace's live threads, the most recently active first, each with its
    newest live turn; with ``agent``, only the threads it holds a live turn in or opened empty."""
    # Each thread's newest live turn, fetched with the page in one statement.
    last = (
        select(col(Turn.msg_id), col(Turn.role), col(Turn.ts), col(Turn.content))
        .where(
            col(Turn.namespace) == col(Thread.namespace),
            col(Turn.thread_id) == col(Thread.thread_id),
            col(Turn.deleted_at).is_(None),
        )
        .order_by(col(Turn.ts).desc(), col(Turn.id).desc())  # the reading order: a summary is not last
        .limit(1)
        .lateral("last_turn")
    )
    query = (
        select(Thread, last.c.msg_id, last.c.role, last.c.ts, last.c.content)  # type: ignore[call-overload]
        .outerjoin(last, true())
        .where(col(Thread.namespace) == namespace, col(Thread.deleted_at).is_(None))
    )
    if window_days:
        query = query.where(col(Thread.last_turn_at) >= utcnow() - timedelta(days=window_days))
    if agent is not None:
        # Threads the agent holds a live turn in, and those it opened that hold none yet.
        by_agent = exists().where(
            col(Turn.namespace) == col(Thread.namespace),
            col(Turn.thread_id) == col(Thread.thread_id),
            col(Turn.agent) == agent,
            col(Turn.deleted_at).is_(None),
        )
        query = query.where(or_(and_(col(Thread.agent) == agent, col(Thread.turn_count) == 0), by_agent))
    query = query.order_by(col(Thread.last_turn_at).desc(), col(Thread.id).desc()).offset(offset).limit(limit)
    return [
        (thread, None if msg_id is None else Newest(msg_id, role, ts, content))
        for thread, msg_id, role, ts, content in s.exec(query).all()
    ]


def turns(
    s: Session,
    namespace: str,
    thread_id: str,
    order: str,
    after: tuple | None,
    limit: int,
    agent: str | None = None,
    run_id: str | None = None,
) -> list[Turn]:
    """Live turns of a thread (one agent's copies, or every agent's; one run's, or all) in (ts, id)
    order, ``asc`` or ``desc``, past the ``after`` position, ``limit`` of them. By time first: a
    compaction's summary carries the time of the first turn it replaced, and reads in their place."""
    query = select(Turn).where(
        col(Turn.namespace) == namespace, col(Turn.thread_id) == thread_id, col(Turn.deleted_at).is_(None)
    )
    if agent:
        query = query.where(col(Turn.agent) == agent)
    if run_id:
        query = query.where(col(Turn.run_id) == run_id)
    if after:
        position = tuple_(col(Turn.ts), col(Turn.id))
        query = query.where(position < tuple_(*after) if order == "desc" else position > tuple_(*after))
    if order == "desc":
        query = query.order_by(col(Turn.ts).desc(), col(Turn.id).desc())
    else:
        query = query.order_by(col(Turn.ts), col(Turn.id))
    return list(s.exec(query.limit(limit)))
