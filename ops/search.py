"""conversation.search and conversation.search_saved_messages: a semantic (vector), lexical (BM25)
or hybrid (both, fused by reciprocal rank) search of the recorded turns, or of one user's saved
messages; without an embedder, semantic falls back to a substring match and hybrid to its lexical
leg (``pipelines.hybrid``)."""

from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

from pydantic import ConfigDict, Field

from models.settings import get_settings
from ops import activity
from ops.caller import Caller
from ops.schemas import ActedIn, Answer, Moment, Ranking, SavedNamespace, UserId, named_agent
from pipelines import excerpts, hybrid, search


class ConversationSearchRequest(Ranking):
    model_config = ConfigDict(
        title="SearchRequest",
        json_schema_extra={
            "examples": [
                {"query": "invoice export timeout", "limit": 5},
                {"query": "BILL-12", "search_mode": "lexical", "thread_id": "support-4711"},
            ]
        },
    )

    thread_id: str | None = Field(
        default=None, max_length=256, description="Only messages of this conversation thread."
    )
    run_id: str | None = Field(
        default=None,
        max_length=256,
        description="Only messages appended with this run id (one interaction run).",
    )
    role: Literal["user", "assistant", "system", "tool"] | None = Field(
        default=None, description="Only messages of this role (user, assistant, system or tool)."
    )
    namespace_scope: Literal["all_mine", "namespace"] = Field(
        default="all_mine",
        description=(
            "all_mine (default): every namespace the token covers unless `namespace` names one; namespace: "
            "the request's (or the token's only) namespace alone."
        ),
    )


class Hit(Answer):
    namespace: str = Field(description="The namespace the matched message is in.")
    thread_id: str = Field(description="The conversation thread the matched message belongs to.")
    msg_id: str = Field(description="The matched message's id within its thread.")
    role: str = Field(description="Who said the message: user, assistant, system or tool.")
    name: str | None = Field(default=None, description="The speaker's name appended with it, if any.")
    agent: str = Field(description="The agent whose copy of the message matched.")
    ts: Moment = Field(description="When the message was said.")
    similarity: float | None = Field(
        description="The vector leg's cosine similarity to the query; null when that leg did not find it."
    )
    lexical_score: float | None = Field(
        default=None, description="The BM25 score, when the lexical leg found it."
    )
    found_by: list[Literal["semantic", "lexical", "substring"]] = Field(
        description="Which legs found it: semantic, lexical, or substring (the fallback without an embedder)."
    )
    semantic_rank: int | None = Field(
        default=None, description="Its 1-based rank in the vector leg's candidates, when that leg found it."
    )
    lexical_rank: int | None = Field(
        default=None, description="Its 1-based rank in the lexical leg's candidates, when that leg found it."
    )
    score: float | None = Field(
        default=None,
        description=(
            "A hybrid search's fused reciprocal-rank score (higher is better), the query's hints' lists "
            "included (its time words, the role or speaker it asks about); null in a single-leg mode."
        ),
    )
    excerpt: str = Field(
        description=(
            "A piece of the message's text, centred on the matched words when the lexical leg found it."
        )
    )


class SearchStats(Answer):
    candidates: dict[str, int] = Field(
        description="Per leg (semantic, lexical): how many messages it brought to the fusion."
    )
    ms: dict[str, float] = Field(
        description="Per leg (and the query's embedding): how many milliseconds it took."
    )


class ConversationSearchAnswer(Answer):
    model_config = ConfigDict(title="SearchAnswer")

    mode: Literal["vector", "hybrid", "lexical", "substring"] = Field(
        description=(
            "How the search ran: hybrid, vector (semantic alone), lexical, or substring (semantic without an "
            "embedder)."
        )
    )
    embedder_error: str | None = Field(
        default=None,
        description=(
            "Why the vector leg did not answer (the embedder is down or not loaded), when it fell back."
        ),
    )
    namespaces: list[str] = Field(description="The namespaces searched.")
    hits: list[Hit] = Field(description="The matching messages, best first.")
    stats: SearchStats = Field(
        description="Candidates and timings per leg, to see why a search ranked as it did."
    )


def run(caller: Caller, req: ConversationSearchRequest) -> ConversationSearchAnswer:
    """Search the conversations by meaning and by words (hybrid search).

    Finds the messages that best answer `query` across the namespaces the token covers (or one, with
    `namespace_scope: "namespace"`), narrowed by thread, run, role or agent. `hybrid` (the default)
    fuses the vector leg (cosine over the embedded text) and the lexical leg (BM25) by reciprocal rank;
    `semantic` and `lexical` run one leg. Without an embedder the vector leg falls back and the answer
    says why (`embedder_error`). Each hit carries which legs found it and their ranks and scores, and
    `stats` the candidates and timings per leg."""
    if req.namespace_scope == "namespace" or req.namespace is not None:
        namespaces = [caller.namespace(req.namespace)]
    else:
        namespaces = caller.scope(None)
    filters = search.Filters(namespaces, req.thread_id, req.run_id, req.role, named_agent(req))
    answer = ranked(req, filters, ConversationSearchAnswer, public_hit, namespaces=namespaces)
    activity.searched()
    return answer


Ranked = TypeVar("Ranked", bound=Answer)


def ranked(
    req: Ranking,
    filters: search.Filters,
    answer: type[Ranked],
    shown: Callable[[search.Hit, str, str, int], Answer],
    **scope: Any,
) -> Ranked:
    """The ``answer`` of a search of ``filters``' scope in the request's mode (conversation.search's,
    and conversation.search_saved_messages' over one user's saved messages), each hit as ``shown``
    gives it, with the fields ``scope`` gives."""
    clock = hybrid.Clock()
    q = hybrid.query(req.query, req.search_mode, req.limit, req.lexical_weight, clock, req.now)
    found = hybrid.search(search.corpus(filters), q, clock)
    chars = get_settings().conversation_search_excerpt_chars
    if q.embedder_error:  # the key is there only when the vector leg did not answer
        scope["embedder_error"] = q.embedder_error
    # pydantic's mypy plugin types a type[Ranked]'s __init__ as the bound's (Answer: no fields)
    return answer(  # type: ignore[call-arg]
        mode=found.mode,
        hits=[shown(hit, found.mode, req.query, chars) for hit in found.hits],
        stats=SearchStats(candidates=found.candidates, ms=clock.ms),
        **scope,
    )


Scored = TypeVar("Scored", bound=Answer)


def scored_hit(
    answer: type[Scored], hit: search.Hit, mode: str, query: str, chars: int, **named: Any
) -> Scored:
    """The hit as ``answer`` (Hit, or a saved message's) shows how it was found and ranked, with
    the fields ``named`` gives (which message it is)."""
    found_by = ["substring"] if mode == "substring" else []
    if hit.similarity is not None and mode != "substring":
        found_by.append("semantic")
    if hit.lexical_score is not None:
        found_by.append("lexical")
    # pydantic's mypy plugin types a type[Scored]'s __init__ as the bound's (Answer: no fields)
    return answer(  # type: ignore[call-arg]
        role=hit.role,
        name=hit.name,
        ts=hit.ts,
        similarity=None if hit.similarity is None else round(hit.similarity, 4),
        lexical_score=None if hit.lexical_score is None else round(hit.lexical_score, 4),
        found_by=found_by,
        semantic_rank=hit.semantic_rank,
        lexical_rank=hit.lexical_rank,
        score=None if hit.score is None else round(hit.score, 6),
        # A BM25 hit shows the text around the words it matched, which may be deep in a long turn.
        excerpt=excerpts.around(hit.content, query, chars)
        if hit.lexical_score is not None
        else hit.content[:chars],
        **named,
    )


def public_hit(hit: search.Hit, mode: str, query: str, chars: int) -> Hit:
    return scored_hit(
        Hit,
        hit,
        mode,
        query,
        chars,
        namespace=hit.namespace,
        thread_id=hit.thread_id,
        msg_id=hit.msg_id,
        agent=hit.agent,
    )


class SearchSavedRequest(Ranking):
    namespace: SavedNamespace = Field(
        default=None,
        description=(
            'The namespace to search, or "@me" for a token bounded to one end user; may be omitted when the '
            "token covers exactly one."
        ),
    )
    user_id: Annotated[
        str | None,
        Field(
            description=(
                "The end user whose saved messages to search (1-256 characters); required unless the token "
                "is pinned to one user."
            )
        ),
    ] = UserId
    conversation_id: str | None = Field(
        default=None, max_length=256, description="Only hits of this conversation."
    )


class SavedHit(Answer):
    conversation_id: str = Field(description="The conversation of the saved message.")
    message_id: str = Field(description="The saved message's id.")
    role: str = Field(description="Who said it.")
    name: str | None = Field(default=None, description="The speaker's name appended with it, if any.")
    ts: Moment = Field(description="When the message was said.")
    saved_at: Moment | None = Field(description="When the user saved it.")
    similarity: float | None = Field(
        description="The vector leg's cosine similarity, when that leg found it."
    )
    lexical_score: float | None = Field(
        default=None, description="The BM25 score, when the lexical leg found it."
    )
    found_by: list[Literal["semantic", "lexical", "substring"]] = Field(
        description="Which legs found it: semantic, lexical, or substring."
    )
    semantic_rank: int | None = Field(default=None, description="Its 1-based rank in the vector leg.")
    lexical_rank: int | None = Field(default=None, description="Its 1-based rank in the lexical leg.")
    score: float | None = Field(default=None, description="The hybrid fused score (higher is better).")
    excerpt: str = Field(description="A piece of the message's text around the match.")


class SearchSavedAnswer(Answer):
    mode: Literal["vector", "hybrid", "lexical", "substring"] = Field(
        description=(
            "How the search ran: hybrid, vector, lexical, or substring (semantic without an embedder)."
        )
    )
    embedder_error: str | None = Field(
        default=None, description="Why the vector leg did not answer, when it fell back."
    )
    namespace: ActedIn
    user_id: str = Field(description="The user whose saved messages were searched.")
    hits: list[SavedHit] = Field(description="The matching saved messages, best first, each message once.")
    stats: SearchStats = Field(description="Candidates and timings per leg.")


def _saved_hit(hit: search.Hit, mode: str, query: str, chars: int) -> SavedHit:
    return scored_hit(
        SavedHit,
        hit,
        mode,
        query,
        chars,
        conversation_id=hit.thread_id,
        message_id=hit.msg_id,
        saved_at=hit.saved_at,
    )


def search_saved(caller: Caller, req: SearchSavedRequest) -> SearchSavedAnswer:
    """Search one user's saved messages by meaning and by words.

    The same hybrid search as conversation.search, over the messages this user saved in the namespace
    (each message once), optionally within one conversation."""
    namespace, user = caller.namespace(req.namespace), caller.acting_user(req.user_id)
    filters = search.Filters([namespace], thread_id=req.conversation_id, saved_by=user)
    return ranked(req, filters, SearchSavedAnswer, _saved_hit, namespace=namespace, user_id=user)
