"""memory.suggest: given what was just said in a session, offer the memory threads it touches
(``pipelines.suggesting`` chooses and vets), and record them in the session: offered ones as
``suggested`` (those a cue brought also as ``cued``, once a session), rejected ones as
``heldBack``."""

from uuid import UUID

from pydantic import Field

from models import db
from models.base import utcnow
from models.settings import get_settings
from ops.caller import Caller
from ops.schemas import ActedIn, Answer
from ops.schemas.memory import LoomOp, SessionRun, ThreadShape, shown, the_loom
from pipelines import sessions, suggesting


class SuggestRequest(LoomOp):
    thread_id: str = Field(min_length=1, max_length=256, description="The conversation the session is in.")
    run_id: SessionRun = None
    said: str = Field(
        min_length=1,
        max_length=4000,
        description="What was just said (1-4,000 characters): the words to find threads for.",
    )
    limit: int = Field(
        default=5, ge=1, le=20, description="How many threads to offer at most (1-20, default 5)."
    )
    max_tokens: int | None = Field(
        default=None,
        ge=20,
        le=4_000,
        description=(
            "The most tokens what is offered may take (20-4,000; a token is ceil(characters / 4), each "
            "suggestion counted as its content, id and receipt); default LOOM_SUGGEST_MAX_TOKENS (400)."
        ),
    )


class Suggestion(ThreadShape):
    cued: bool = Field(description="Whether one of its cues was said (rather than found by search).")
    similarity: float | None = Field(
        description="Its cosine similarity to what was said; null when not embedded yet."
    )
    receipt: str = Field(
        description=(
            'Why it was offered, in one line: the cue said (cue "deploy freeze" was said), or its '
            "similarity to what was said and whether it shares words with it."
        )
    )


class SuggestAnswer(Answer):
    namespace: ActedIn
    session: UUID = Field(description="The session's id (a uuid).")
    suggestions: list[Suggestion] = Field(
        description="The threads offered (each once a session, never one of its tapestry)."
    )
    heldBack: int = Field(description="How many candidates were held back as not similar enough.")  # noqa: N815 (found, but held back after vetting)


def suggest(caller: Caller, req: SuggestRequest) -> SuggestAnswer:
    """Offer the memory threads that what was just said touches.

    Call it with the latest message of a session: the loom's hybrid search over those words, and any
    thread whose cue was said, each vetted for similarity; the ones that pass are offered within
    `max_tokens`, each with its receipt (once a session, never a thread of the session's tapestry),
    the rest held back and counted.

    Errors: 404 for a loom not in this namespace."""
    said = suggesting.Said.embedded(req.said)
    with db.session() as s:
        loom = the_loom(s, caller, req)
        where = sessions.Where(req.thread_id, req.run_id, req.agent)
        settings = get_settings()
        bounds = suggesting.Bounds(
            settings.memory_suggest_min_similarity, req.limit, req.max_tokens or settings.suggest_max_tokens
        )
        session, choice = suggesting.suggest(s, loom, where, said, bounds, utcnow())
        return SuggestAnswer(
            namespace=loom.namespace,
            session=session.id,
            suggestions=[
                shown(c.thread, Suggestion, cued=c.cued, similarity=c.similarity, receipt=c.receipt)
                for c in choice.offered
            ],
            heldBack=len(choice.held_back),
        )
