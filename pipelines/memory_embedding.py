"""The memory_embedding stage's work: the texts of memory threads to embed, and their vectors
written unless the thread was cut or reframed while the model ran. The actor's body is the turns'
batching one (``workers.bodies.embedded_in_batches``)."""

from pgvector import Vector
from sqlmodel import Session, col, select

from models.base import stored, utcnow
from models.memory import MemoryThread
from models.queries import memory as queries
from pipelines import embedding
from pipelines.memory import embedded_text


def load_pending(s: Session, row_ids: list[int]) -> list[embedding.Pending]:
    rows = s.exec(
        select(col(MemoryThread.row_id), col(MemoryThread.content), col(MemoryThread.digest)).where(
            col(MemoryThread.row_id).in_(row_ids), col(MemoryThread.cut_at).is_(None)
        )
    ).all()
    return [
        embedding.Pending(stored(row_id), embedded_text(content), digest) for row_id, content, digest in rows
    ]


def store_vectors(
    s: Session, batch: list[embedding.Pending], vectors: list[list[float]], model: str
) -> dict[int, str]:
    """Write each vector unless its thread was cut or reframed while the model ran."""
    written = set(
        s.execute(
            queries.STORE_THREAD_VECTORS,
            {
                "ids": [pending.id for pending in batch],
                "digests": [pending.digest for pending in batch],
                "vectors": [Vector(vector).to_text() for vector in vectors],
                "model": model,
                "now": utcnow(),
            },
        ).scalars()
    )
    return {
        pending.id: embedding.SUCCEEDED if pending.id in written else embedding.DELETED for pending in batch
    }


def record_error(s: Session, row_ids: list[int], error: str) -> None:
    s.execute(queries.RECORD_THREAD_EMBED_ERROR, {"error": error, "ids": row_ids})
