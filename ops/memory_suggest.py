"""memory.suggest: given what was just said in a session, offer the memory threads it touches
(``pipelines.suggesting`` chooses and vets), and record them in the session: offered ones as
``suggested`` (those a cue brought also as ``cued``, once a session), rejected ones as
``heldBack``."""

from uuid import UUID

from pydantic import Field
from sqlalchemy import func
from sqlmodel import col, select

from models import db
from models.base import utcnow
from models.memory import MemoryThread
from models.settings import get_settings
from ops.caller import Caller
from ops.memory import LoomOp, ThreadShape, shown, the_loom
from ops.schemas import ActedIn, Answer
from pipelines import hybrid, memory, sessions, suggesting


class SuggestRequest(LoomOp):
    thread_id: str = Field(min_length=1, max_length=256, description="The conversation the session is in.")
    run_id: str | None = Field(
        default=None, min_length=1, max_length=256, description="The interaction run of the session."
    )
    said: str = Field(
        min_length=1,
        max_length=4000,
        description="What was just said (1-4,000 characters): the words to find threads for.",
    )
    limit: int = Field(
        default=5, ge=1, le=20, description="How many threads to offer at most (1-20, default 5)."
    )


class Suggestion(ThreadShape):
    cued: bool = Field(description="Whether one of its cues was said (rather than found by search).")
    similarity: float | None = Field(
        description="Its cosine similarity to what was said; null when not embedded yet."
    )


class SuggestAnswer(Answer):
    namespace: ActedIn
    session: UUID = Field(description="The session's id (a uuid).")
    suggestions: list[Suggestion] = Field(description="The threads offered (each once a session).")
    heldBack: int = Field(description="How many candidates were held back as not similar enough.")  # noqa: N815 (found, but held back after vetting)


def suggest(caller: Caller, req: SuggestRequest) -> SuggestAnswer:
    """Offer the memory threads that what was just said touches.

    Call it with the latest message of a session: the loom's hybrid search over those words, and any
    thread whose cue was said, each vetted for similarity; the ones that pass are offered (once a
    session), the rest held back and counted.

    Errors: 404 for a loom not in this namespace."""
    settings = get_settings()
    vector, model, _ = hybrid.embedded_query(req.said)
    now = utcnow()
    pool = max(4 * req.limit, 20)
    with db.session() as s:
        loom = the_loom(s, caller, req)
        session = sessions.open_session(s, loom, sessions.Where(req.thread_id, req.run_id, req.agent), now)
        # Every candidate of both legs, fused with no floor: vetting (below) judges their similarity.
        corpus = memory.corpus(s, loom.id, now)
        semantic = corpus.by_vector(vector, model, pool, -1.0) if vector is not None and model else []
        found = corpus.by_lexical(req.said, pool)
        ranked = hybrid.fuse(semantic, found, hybrid.LEXICAL_WEIGHT, pool, key=corpus.key)
        with_cues = s.exec(
            select(MemoryThread).where(
                col(MemoryThread.loom_id) == loom.id,
                func.cardinality(col(MemoryThread.cues)) > 0,
                *memory.live(now),
            )
        ).all()
        cued_before = set(session.cued_thread_ids)
        cued = [
            t
            for t in with_cues
            if t.id not in cued_before and any(suggesting.cue_said(c, req.said) for c in t.cues)
        ]
        threads = {t.id: t for t in cued} | {hit.thread.id: hit.thread for hit in ranked}
        similar = {}
        if vector is not None and threads:
            similar = memory.similarities(s, list(threads), vector, model)
        lexical = {hit.thread.id for hit in found}
        cued_ids = {t.id for t in cued}
        order = [*cued_ids, *(i for i in threads if i not in cued_ids)]
        candidates = [
            suggesting.Candidate(threads[i], similar.get(i), i in lexical, i in cued_ids) for i in order
        ]
        choice = suggesting.vet(
            candidates, settings.memory_suggest_min_similarity, set(session.suggested_thread_ids), req.limit
        )
        sessions.record(
            s,
            session,
            {
                "suggested_thread_ids": [c.thread.id for c in choice.offered],
                "cued_thread_ids": [c.thread.id for c in choice.offered if c.cued],
                "held_back_thread_ids": [c.thread.id for c in choice.held_back],
            },
            now,
        )
        return SuggestAnswer(
            namespace=loom.namespace,
            session=session.id,
            suggestions=[
                shown(c.thread, Suggestion, cued=c.cued, similarity=c.similarity) for c in choice.offered
            ],
            heldBack=len(choice.held_back),
        )
