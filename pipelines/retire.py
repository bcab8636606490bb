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

from sqlalchemy import text, update
from sqlmodel import Session, col

from models.conversation import Turn
from models.settings import get_settings

LEGACY_CUT = 240  # the length earlier builds cut an embedding row's text to

SETTLE_ROWS = text("""
WITH orphaned AS (
    SELECT e.id, e.namespace, e.thread_id, e.msg_id, e.text, e.turn_id
    FROM embeddings e
    WHERE e.namespace = :namespace AND e.thread_id = :thread_id AND e.deleted_at IS NULL
      AND NOT EXISTS (SELECT FROM turns t WHERE t.id = e.turn_id AND t.deleted_at IS NULL)
), heir AS (
    SELECT DISTINCT ON (o.id) o.id AS embedding_id, c.id AS turn_id, c.agent, c.role, c.run_id, c.user_id
    FROM orphaned o
    JOIN turns c ON c.namespace = o.namespace AND c.thread_id = o.thread_id AND c.msg_id = o.msg_id
    LEFT JOIN turns own ON own.id = o.turn_id
    WHERE c.deleted_at IS NULL AND c.sensitivity <> 'high'
      AND (c.role IN ('user', 'assistant') OR c.metadata ? 'compacted_from')
      AND NOT EXISTS (SELECT FROM embeddings x WHERE x.turn_id = c.id)  -- a row serves one copy
      AND CASE WHEN length(o.text) = :legacy_cut
               THEN left(c.content, :max_chars) = left(own.content, :max_chars)
               ELSE left(c.content, :max_chars) = o.text END
    ORDER BY o.id, c.id
), passed AS (
    UPDATE embeddings e
    SET turn_id = h.turn_id, agent = h.agent, role = h.role, run_id = h.run_id, user_id = h.user_id
    FROM heir h WHERE e.id = h.embedding_id
    RETURNING e.id
)
UPDATE embeddings e SET deleted_at = :now
FROM orphaned o
WHERE e.id = o.id AND o.id NOT IN (SELECT embedding_id FROM heir)
""")


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
        SETTLE_ROWS,
        {
            "namespace": namespace,
            "thread_id": thread_id,
            "now": now,
            "legacy_cut": LEGACY_CUT,
            "max_chars": get_settings().embed_max_chars,
        },
    )
