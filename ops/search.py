"""conversation.search: a semantic (vector), lexical (BM25) or hybrid (both, fused by reciprocal
rank) search of the recorded turns; without an embedder, semantic falls back to a substring match
and hybrid to its lexical leg."""

import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Literal, TypeVar

from pydantic import Field

from models import db
from models.settings import get_settings
from ops import activity
from ops.caller import Caller
from ops.conversation_read import named_agent
from ops.schemas import Answer, Moment, OpRequest
from pipelines import excerpts, search
from providers.embedders import get_embedder

log = logging.getLogger(__name__)


class Ranking(OpRequest):
    """What every search asks: the query, how many hits, and how they are ranked."""

    query: str = Field(min_length=1, max_length=4000)
    limit: int = Field(default=10, ge=1, le=100)
    # hybrid: both legs fused by reciprocal rank (a hit only the vector leg found must pass its
    # floor); semantic: cosine similarity over the embedded first 2,048 characters, with its
    # floor; lexical: BM25 over the whole text.
    search_mode: Literal["hybrid", "semantic", "lexical"] = "hybrid"
    lexical_weight: float = Field(default=0.6, ge=0, le=1)  # the BM25 leg's share of a hybrid score


class SearchRequest(Ranking):
    thread_id: str | None = Field(default=None, max_length=256)
    run_id: str | None = Field(default=None, max_length=256)
    role: Literal["user", "assistant", "system", "tool"] | None = None
    namespace_scope: Literal["all_mine", "namespace"] = "all_mine"


class Hit(Answer):
    namespace: str
    thread_id: str
    msg_id: str
    role: str
    agent: str
    ts: Moment
    similarity: float | None  # the vector leg's cosine similarity; null when it did not find it
    lexical_score: float | None = None  # the BM25 score, when the lexical leg found it
    found_by: list[Literal["semantic", "lexical", "substring"]]
    semantic_rank: int | None = None
    lexical_rank: int | None = None
    score: float | None = None  # a hybrid search's fused score
    excerpt: str


class SearchStats(Answer):
    candidates: dict[str, int]  # per leg: the messages it brought to the fusion
    ms: dict[str, float]  # per leg (and the query's embedding): its time


class SearchAnswer(Answer):
    mode: Literal["vector", "hybrid", "lexical", "substring"]  # vector: the semantic leg
    embedder_error: str | None = None  # why the vector leg did not answer
    namespaces: list[str]
    hits: list[Hit]
    stats: SearchStats


# A hybrid search fuses this many candidates of each leg (at least), however few it returns.
POOL_MIN, POOL_FACTOR, POOL_MAX = 50, 5, 500
RRF_K = 10  # small: the top of each list counts most (tuned on the LongMemEval file, bench/README.md)


def query_vector(query: str) -> tuple[list[float] | None, str | None, str | None]:
    """(the query's vector, the model that made it, why there is none)."""
    try:
        embedder = get_embedder()
        return embedder.embed([query])[0], embedder.name, None
    except Exception as exc:  # any embedder failure degrades the search, never a 500
        log.warning("embedder unavailable for search: %s", exc)
        return None, None, f"{type(exc).__name__}: {exc}"


class _Clock:
    def __init__(self) -> None:
        self.ms: dict[str, float] = {}

    def timed(self, leg: str, work):
        started = time.perf_counter()
        try:
            return work()
        finally:
            self.ms[leg] = round((time.perf_counter() - started) * 1000, 2)


def run(caller: Caller, req: SearchRequest) -> SearchAnswer:
    if req.namespace_scope == "namespace" or req.namespace is not None:
        namespaces = [caller.namespace(req.namespace)]
    else:
        namespaces = caller.scope(None)
    filters = search.Filters(namespaces, req.thread_id, req.run_id, req.role, named_agent(req))
    answer = ranked(req, filters, SearchAnswer, public_hit, namespaces=namespaces)
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
    settings = get_settings()
    clock, candidates = _Clock(), {}
    vector = model = error = None
    if req.search_mode != "lexical":
        vector, model, error = clock.timed("embed", lambda: query_vector(req.query))
    pool = min(max(req.limit * POOL_FACTOR, POOL_MIN), POOL_MAX)
    with db.session() as s:
        if req.search_mode == "semantic" and vector is not None:
            mode = "vector"
            floor = settings.conversation_search_min_similarity
            hits = clock.timed(
                "semantic", lambda: search.by_vector(s, vector, model, filters, req.limit, floor)
            )
            candidates["semantic"] = len(hits)
        elif req.search_mode == "semantic":
            mode = "substring"
            hits = clock.timed("substring", lambda: search.by_substring(s, req.query, filters, req.limit))
            candidates["substring"] = len(hits)
        else:
            found = clock.timed("lexical", lambda: search.by_lexical(s, req.query, filters, pool))
            candidates["lexical"] = len(found)
            if req.search_mode == "lexical" or vector is None:
                mode, hits = (
                    "lexical",
                    [replace(h, lexical_rank=i) for i, h in enumerate(found[: req.limit], 1)],
                )
            else:
                mode = "hybrid"
                near = clock.timed(
                    "semantic", lambda: search.by_vector(s, vector, model, filters, pool, -1.0)
                )
                candidates["semantic"] = len(near)
                # Ranked over every candidate; a hit the lexical leg did not find is kept only
                # above the semantic floor, so words found nowhere bring no hits.
                fused = search.fuse(near, found, req.lexical_weight, RRF_K, len(near) + len(found))
                floor = settings.conversation_search_min_similarity
                hits = [h for h in fused if h.lexical_rank is not None or h.similarity >= floor][: req.limit]
    chars = settings.conversation_search_excerpt_chars
    if error:  # the key is there only when the vector leg did not answer
        scope["embedder_error"] = error
    return answer(
        mode=mode,
        hits=[shown(hit, mode, req.query, chars) for hit in hits],
        stats=SearchStats(candidates=candidates, ms=clock.ms),
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
    return answer(
        role=hit.role,
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
