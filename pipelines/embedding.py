"""The embedding stage's work: read pending embedding rows, embed them in one model call, store the
vectors. Plain functions; the actor in ``workers/embedding.py`` adds claiming and retries."""

from dataclasses import dataclass

from sqlmodel import Session, select

from models.base import utcnow
from models.conversation import EMBEDDED_ROLES, Embedding, Turn

SUCCEEDED, DELETED = "succeeded", "deleted"


def embeddable(role: str, sensitivity: str) -> bool:
    """Only user and assistant turns are embedded, and never one that reads as high."""
    return role in EMBEDDED_ROLES and sensitivity != "high"


def embedding_text(content: str, max_chars: int) -> str:
    return content[:max_chars]


@dataclass(frozen=True)
class Pending:
    turn_id: int
    text: str
    digest: str


def load(session: Session, turn_ids: list[int]) -> list[Pending]:
    rows = session.exec(
        select(Embedding.turn_id, Embedding.text, Embedding.digest).where(Embedding.turn_id.in_(turn_ids))
    ).all()
    return [Pending(*row) for row in rows]


def store(session: Session, batch: list[Pending], vectors: list[list[float]], model: str) -> dict[int, str]:
    """Write each vector unless its turn was deleted (or re-written) while the model ran; the late
    vector is dropped. Returns the outcome per turn id."""
    rows = {
        row.turn_id: row
        for row in session.exec(
            select(Embedding)
            .join(Turn, Turn.id == Embedding.turn_id)
            .where(Embedding.turn_id.in_([p.turn_id for p in batch]), Turn.deleted_at.is_(None))
            .with_for_update(of=Embedding)
        )
    }
    outcomes = {}
    now = utcnow()
    for pending, vector in zip(batch, vectors, strict=True):
        row = rows.get(pending.turn_id)
        if row is None or row.digest != pending.digest:
            outcomes[pending.turn_id] = DELETED
            continue
        row.vector, row.model, row.error, row.embedded_at = vector, model, None, now
        outcomes[pending.turn_id] = SUCCEEDED
    return outcomes


def record_error(session: Session, turn_ids: list[int], error: str) -> None:
    """Fail-open: the turn stays stored; its embedding row says why it has no vector."""
    for row in session.exec(select(Embedding).where(Embedding.turn_id.in_(turn_ids))):
        row.error = error
