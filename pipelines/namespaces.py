"""The namespaces as an operator sees them: each one's Record switch, live threads and last turn."""

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, or_
from sqlmodel import col, select

from models import db
from models.brief import SessionBrief
from models.conversation import Thread
from models.memory import Loom, MemoryThread
from models.namespace import Namespace


@dataclass(frozen=True)
class Overview:
    name: str
    conversation_logging_enabled: bool  # a namespace with no row does not record
    threads: int  # live ones
    last_turn_at: datetime | None  # None: it has no thread


def overview(names: tuple[str, ...] | None) -> list[Overview]:
    """The namespaces ``names`` by name (for None, every one that has a row, a thread, a brief, a
    memory thread or a loom made by name: a namespace holding only briefs or memory is one to choose
    too; a default loom is not enough, as a first read of any name makes one), each with its switch,
    its live threads and its newest turn's time."""
    recording = select(col(Namespace.name), col(Namespace.conversation_logging_enabled))
    threads = (
        select(col(Thread.namespace), func.count(), func.max(col(Thread.last_turn_at)))
        .where(col(Thread.deleted_at).is_(None))
        .group_by(col(Thread.namespace))
    )
    if names is not None:
        recording = recording.where(col(Namespace.name).in_(names))
        threads = threads.where(col(Thread.namespace).in_(names))
    with db.session() as s:
        switches = dict(s.exec(recording).all())
        counts = {name: (n, last) for name, n, last in s.exec(threads).all()}
        others = set()
        if names is None:
            # Through the looms (few, and each memory thread's is indexed): no scan of the threads.
            holds_memory = (
                select(col(MemoryThread.loom_id)).where(col(MemoryThread.loom_id) == col(Loom.id)).exists()
            )
            for holding in (
                select(col(SessionBrief.namespace)),
                select(col(Loom.namespace)).where(or_(col(Loom.is_default).is_(False), holds_memory)),
            ):
                others |= set(s.exec(holding.distinct()).all())
    known = set(names) if names is not None else set(switches) | set(counts) | others
    return [Overview(name, switches.get(name, False), *counts.get(name, (0, None))) for name in sorted(known)]
