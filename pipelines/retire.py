"""Retiring turns (a compaction's originals, a deleted thread's turns): tombstone them, and settle
the embedding rows that served them.

Agents' copies of one message with the same text share one embedding row, which serves one of
them. When the copy it serves is retired (or was already: deleted or compacted by an earlier
build, or removed by the retention TTL), the row passes to another agent's live copy of the
message that search indexes (a user or assistant turn, or a summary) whose first characters are
the row's text and that no row serves yet, and takes that copy's agent, role, run and user; with no
such copy it is tombstoned. A row of exactly 240 characters (an earlier build's cut) cannot be compared with a
copy's text: it passes only to a copy whose first characters match those of the row's own turn,
and is tombstoned when that turn is gone. Both statements run in the caller's transaction."""

from datetime import datetime

from sqlalchemy import update
from sqlmodel import Session, col

from models.conversation import Turn
from models.queries import embeddings as queries
from models.settings import get_settings

LEGACY_CUT = 240  # the length earlier builds cut an embedding row's text to


def retire(s: Session, namespace: str, thread_id: str, turn_ids: list[int], now: datetime) -> None:
    """Tombstone the turns and settle the thread's embedding rows."""
    s.exec(
        update(Turn).where(col(Turn.id).in_(turn_ids), col(Turn.deleted_at).is_(None)).values(deleted_at=now)
    )
    settle_rows(s, namespace, thread_id, now)


def settle_rows(s: Session, namespace: str, thread_id: str, now: datetime) -> None:
    """Every live embedding row of the thread whose own copy is no longer live passes to another
    copy or is tombstoned."""
    s.execute(
        queries.SETTLE_ROWS,
        {
            "namespace": namespace,
            "thread_id": thread_id,
            "now": now,
            "legacy_cut": LEGACY_CUT,
            "max_chars": get_settings().embed_max_chars,
        },
    )
