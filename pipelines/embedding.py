"""The embedding stage's work: read pending embedding rows, embed them in one model call, store the
vectors. Plain functions; the actor in ``workers/stages/embedding.py`` adds claiming and retries."""

from collections.abc import Callable
from dataclasses import dataclass

from pgvector import Vector
from sqlmodel import Session, col, select

from models.base import stored, utcnow
from models.conversation import EMBEDDED_ROLES, Embedding
from models.queries import embeddings as queries

SUCCEEDED, DELETED = "succeeded", "deleted"


def embeddable(role: str, sensitivity: str) -> bool:
    """Only user and assistant turns are embedded, and never one that reads as high."""
    return role in EMBEDDED_ROLES and sensitivity != "high"


def embedding_text(content: str, max_chars: int) -> str:
    return content[:max_chars]


@dataclass(frozen=True)
class Pending:
    id: int  # of the embedding row
    text: str
    digest: str


def load(session: Session, ids: list[int]) -> list[Pending]:
    """The live embedding rows of those ids (a deleted one is not embedded)."""
    rows = session.exec(
        select(col(Embedding.id), col(Embedding.text), col(Embedding.digest)).where(
            col(Embedding.id).in_(ids), col(Embedding.deleted_at).is_(None)
        )
    ).all()
    return [Pending(stored(id_), text, digest) for id_, text, digest in rows]


def embed_isolating(
    embed: Callable[[list[str]], list[list[float]]], batch: list[Pending]
) -> tuple[dict[int, list[float]], dict[int, str]]:
    """Embed a batch in one call; when that fails, halve it to isolate the texts that make it fail,
    so a bad text fails only its own row. When both halves of a part fail as well, one text of
    the part (the shortest) is tried alone: if even that fails, the embedder itself is failing and
    the whole part fails with its error, without further calls (four calls while a provider is
    down, not one per text); if it succeeds, the part holds several bad texts and both halves are
    halved in turn. Returns (vector by row id, error by row id)."""
    vectors: dict[int, list[float]] = {}
    errors: dict[int, str] = {}

    def attempt(part: list[Pending]) -> str | None:
        try:
            answered = list(zip((p.id for p in part), embed([p.text for p in part]), strict=True))
        except Exception as exc:
            return f"{type(exc).__name__}: {exc}"
        vectors.update(answered)  # only a whole, well-counted answer is kept
        return None

    def isolate(part: list[Pending], error: str) -> None:
        """``error`` is what a call of exactly ``part`` answered."""
        if len(part) == 1:
            errors[part[0].id] = error
            return
        halves = (part[: len(part) // 2], part[len(part) // 2 :])
        failed = [(half, half_error) for half in halves if (half_error := attempt(half))]
        if len(failed) == len(halves):
            probe = min(part, key=lambda pending: len(pending.text))
            if probe_error := attempt([probe]):
                errors.update((pending.id, probe_error) for pending in part)
                return
            # Bad texts in both halves: each half, less the probe, answers for itself again.
            rests = ([pending for pending in half if pending is not probe] for half in halves)
            failed = [(rest, rest_error) for rest in rests if rest and (rest_error := attempt(rest))]
        for half, half_error in failed:
            isolate(half, half_error)

    if batch and (error := attempt(batch)):
        isolate(batch, error)
    return vectors, errors


def store(session: Session, batch: list[Pending], vectors: list[list[float]], model: str) -> dict[int, str]:
    """Write each vector unless its row was deleted (or re-written) while the model ran; the late
    vector is dropped. Returns the outcome per row id."""
    pairs = list(zip(batch, vectors, strict=True))
    session.execute(queries.LOCK_SAVED_TURNS, {"ids": [pending.id for pending, _ in pairs]})
    written = set(
        session.execute(
            queries.STORE_VECTORS,
            {
                "ids": [pending.id for pending, _ in pairs],
                "digests": [pending.digest for pending, _ in pairs],
                "vectors": [Vector(vector).to_text() for _, vector in pairs],
                "model": model,
                "now": utcnow(),
            },
        ).scalars()
    )
    return {pending.id: SUCCEEDED if pending.id in written else DELETED for pending in batch}


def record_error(session: Session, ids: list[int], error: str) -> None:
    """Fail-open: the turn stays stored; its embedding row says why it has no vector."""
    for row in session.exec(select(Embedding).where(col(Embedding.id).in_(ids))):
        row.error = error
