"""The embedding stage's work: read pending embedding rows, embed them in one model call, store the
vectors. Plain functions; the actor in ``workers/embedding.py`` adds claiming and retries."""

from dataclasses import dataclass

from pgvector import Vector
from sqlmodel import Session, select

from models import queries
from models.base import utcnow
from models.conversation import EMBEDDED_ROLES, Embedding

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
    pairs = list(zip(batch, vectors, strict=True))
    written = set(
        session.execute(
            queries.STORE_VECTORS,
            {
                "turn_ids": [pending.turn_id for pending, _ in pairs],
                "digests": [pending.digest for pending, _ in pairs],
                "vectors": [Vector(vector).to_text() for _, vector in pairs],
                "model": model,
                "now": utcnow(),
            },
        ).scalars()
    )
    return {pending.turn_id: SUCCEEDED if pending.turn_id in written else DELETED for pending in batch}


def record_error(session: Session, turn_ids: list[int], error: str) -> None:
    """Fail-open: the turn stays stored; its embedding row says why it has no vector."""
    for row in session.exec(select(Embedding).where(Embedding.turn_id.in_(turn_ids))):
        row.error = error
