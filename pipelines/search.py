"""conversation.search's two legs: cosine similarity over embedded turns (HNSW), and the substring
fallback for when the embedder cannot answer. Neither ever returns a turn that reads as high:
such a turn has no embedding row, and the fallback filters on the screening verdict.

Both legs answer one hit per message: the vector leg one per live embedding row (agents that
logged the same text share it), the fallback the newest copy of each message it reads. A search scoped to an
agent finds the rows of which that agent holds a live copy."""

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import exists, text
from sqlalchemy.orm import aliased
from sqlmodel import Session, col, select

from models.conversation import EMBEDDED_ROLES, Embedding, Turn


@dataclass(frozen=True)
class Filters:
    namespaces: list[str]
    thread_id: str | None = None
    run_id: str | None = None
    role: str | None = None
    agent: str | None = None


@dataclass(frozen=True)
class Hit:
    namespace: str
    thread_id: str
    msg_id: str
    role: str
    agent: str
    ts: datetime
    content: str
    similarity: float | None


def _filtered(query, f: Filters):
    query = query.where(
        col(Turn.namespace).in_(f.namespaces), Turn.deleted_at.is_(None), Turn.sensitivity != "high"
    )
    if f.thread_id:
        query = query.where(Turn.thread_id == f.thread_id)
    if f.run_id:
        query = query.where(Turn.run_id == f.run_id)
    if f.role:
        query = query.where(Turn.role == f.role)
    if f.agent:
        copy = aliased(Turn)
        query = query.where(
            exists().where(
                copy.namespace == Turn.namespace,
                copy.thread_id == Turn.thread_id,
                copy.msg_id == Turn.msg_id,
                copy.agent == f.agent,
                copy.deleted_at.is_(None),
            )
        )
    return query


def by_vector(
    s: Session, vector: list[float], model: str, f: Filters, limit: int, min_similarity: float
) -> list[Hit]:
    """Turns nearest the query's vector among those embedded by the same ``model`` (another model's
    vectors live in another space; the re-embedding pass brings them over)."""
    # Filters are applied after the index walk; iterative scans keep walking the HNSW graph until
    # enough rows pass them (pgvector >= 0.8), instead of returning too few hits.
    s.exec(text("SET LOCAL hnsw.iterative_scan = relaxed_order"))
    s.exec(text(f"SET LOCAL hnsw.ef_search = {max(40, 2 * limit)}"))
    distance = Embedding.vector.cosine_distance(vector)
    query = (
        select(Turn, (1 - distance).label("similarity"))
        .join(Embedding, Embedding.turn_id == Turn.id)
        .where(Embedding.vector.is_not(None), Embedding.model == model, Embedding.deleted_at.is_(None))
        .order_by(distance)
        .limit(limit)
    )
    rows = s.exec(_filtered(query, f)).all()
    hits = [_hit(turn, float(similarity)) for turn, similarity in rows if similarity >= min_similarity]
    return sorted(hits, key=lambda hit: -hit.similarity)


def _escape_like(term: str) -> str:
    return term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


# The predicate of the partial trigram index on turns.content (migration 0002), stated as literals:
# the planner uses a partial index only when it can prove the query implies the index's predicate,
# which it cannot from bound parameters (once a statement is prepared and planned generically).
# Keep it the same as the migration's.
SUBSTRING_INDEX_PREDICATE = text(
    "turns.role IN ('user', 'assistant') AND turns.deleted_at IS NULL AND turns.sensitivity <> 'high'"
)


COPIES_READ = 4  # the fallback reads this many turns a hit, so agents' copies of a message still fill it


def by_substring(s: Session, query_text: str, f: Filters, limit: int) -> list[Hit]:
    """Turns whose content holds ``query_text`` (case-insensitive, wildcards matched literally),
    newest first. ``ILIKE '%term%'`` is served by the trigram index for terms of 3+ characters."""
    # Plan for this very term: a generic plan (psycopg prepares a statement run 5 times, and
    # PostgreSQL may then stop planning it per call) cannot tell a rare term, which the index
    # finds in a millisecond, from a 2-character one, which it cannot serve at all and which then
    # walks the whole index: 3.3 s against 1.0 s for a plain scan at 1,000,000 turns
    # (bench/substring.py).
    s.exec(text("SET LOCAL plan_cache_mode = force_custom_plan"))
    query = (
        select(Turn)
        .where(
            SUBSTRING_INDEX_PREDICATE,
            col(Turn.role).in_(EMBEDDED_ROLES),
            col(Turn.content).ilike(f"%{_escape_like(query_text)}%"),
        )
        .order_by(col(Turn.ts).desc(), col(Turn.id).desc())
        .limit(limit * COPIES_READ)
    )
    # Agents' copies of one message: the newest stands for them all.
    hits = {(t.namespace, t.thread_id, t.msg_id): t for t in reversed(s.exec(_filtered(query, f)).all())}
    return [_hit(turn, None) for turn in sorted(hits.values(), key=lambda t: (t.ts, t.id), reverse=True)][
        :limit
    ]


def _hit(turn: Turn, similarity: float | None) -> Hit:
    return Hit(
        turn.namespace, turn.thread_id, turn.msg_id, turn.role, turn.agent, turn.ts, turn.content, similarity
    )
