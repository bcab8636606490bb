"""One hybrid search for every corpus: the recorded turns (conversation.search), one user's saved
messages, a loom's memory threads. It owns which legs a mode runs, their reciprocal-rank fusion,
the relevance floor, and what a mode falls back to when the embedder cannot answer; a corpus says
only how its legs read (``Corpus``).

- ``hybrid``: both legs over a pool of candidates, fused by reciprocal rank; a hit only the vector
  leg found is kept only at or above the floor, so words found nowhere bring no hits.
- ``semantic``: the vector leg alone, at or above the floor.
- ``lexical``: BM25 alone.
A hybrid search then lifts the candidates the query's hints point to (``pipelines.hints``: the days
its time words name, whose words it asks about), each hint one more ranked list in the fusion.
Without a query vector, ``semantic`` runs the corpus's substring leg where it has one and the
lexical leg where not, and ``hybrid`` runs its lexical leg."""

import logging
import time
from collections.abc import Callable, Hashable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import Field, dataclass, field, replace
from datetime import datetime
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from models.base import utcnow
from models.settings import get_settings
from pipelines import hints
from providers.embedders import get_embedder

log = logging.getLogger(__name__)

# A hybrid search fuses this many candidates of each leg (at least), however few it returns.
POOL_MIN, POOL_FACTOR, POOL_MAX = 50, 5, 500
RRF_K = 10  # small: the top of each list counts most (tuned on the LongMemEval file, bench/README.md)
LEXICAL_WEIGHT = 0.6  # the lexical leg's weight unless a request says; the vector leg's is 1 - it
# The weights of the hints' lists, beside the legs' 1 - w and w (bench/README.md, issue 37): a named
# speaker is near certain, a time window likely, the role a lean (a higher weight cost questions
# about what the assistant said).
TIME_WEIGHT, SPEAKER_WEIGHT, ROLE_WEIGHT = 0.4, 1.0, 0.2


class Ranks(Protocol):
    """A hit of any corpus: a dataclass carrying its legs' scores and ranks (read-only: a frozen
    dataclass's fields; ``dataclasses.replace`` makes the ranked copies)."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    @property
    def similarity(self) -> float | None: ...
    @property
    def lexical_score(self) -> float | None: ...
    @property
    def semantic_rank(self) -> int | None: ...
    @property
    def lexical_rank(self) -> int | None: ...
    @property
    def score(self) -> float | None: ...


H = TypeVar("H", bound=Ranks)


@dataclass(frozen=True)
class Corpus(Generic[H]):
    """How a corpus's legs read: ``by_vector(vector, model, limit, floor)``, ``by_lexical(query,
    limit)``, each best first; ``key``, what makes two hits one document; ``by_substring(query,
    limit)``, the semantic mode's fallback without an embedder, where the corpus has one; ``said``,
    when and by whom a hit was said, for the hints; ``side_by_side``: its legs read on connections
    of their own, so a hybrid search runs them at once."""

    by_vector: Callable[[list[float], str, int, float], list[H]]
    by_lexical: Callable[[str, int], list[H]]
    key: Callable[[H], Hashable]
    said: Callable[[H], hints.Origin]
    by_substring: Callable[[str, int], list[H]] | None = None
    side_by_side: bool = False


@dataclass
class Clock:
    """Milliseconds a step of one search took (the query's embedding, each leg)."""

    ms: dict[str, float] = field(default_factory=dict)

    def timed(self, step: str, work):
        started = time.perf_counter()
        try:
            return work()
        finally:
            self.ms[step] = round((time.perf_counter() - started) * 1000, 2)


@dataclass(frozen=True)
class Query:
    text: str
    mode: str  # hybrid, semantic or lexical
    limit: int
    lexical_weight: float = LEXICAL_WEIGHT
    vector: list[float] | None = None  # the text's, when the embedder answered
    model: str | None = None  # the model that made it
    embedder_error: str | None = None  # why there is no vector, when the mode wanted one
    now: datetime | None = None  # the moment its time words are read against; None: when it runs


@dataclass
class Ranked(Generic[H]):
    mode: str  # how it ran: hybrid, vector, lexical or substring
    hits: list[H]
    candidates: dict[str, int]  # per leg, how many hits it brought


def query(
    text: str, mode: str, limit: int, lexical_weight: float, clock: Clock, now: datetime | None = None
) -> Query:
    """The query, with its vector where the mode uses one (the embedding timed as ``embed``)."""
    if mode == "lexical":
        return Query(text, mode, limit, lexical_weight, now=now)
    vector, model, error = clock.timed("embed", lambda: embedded_query(text))
    return Query(text, mode, limit, lexical_weight, vector, model, error, now)


def embedded_query(text: str) -> tuple[list[float] | None, str | None, str | None]:
    """(the text's vector, the model that made it, why there is none: the embedder failed)."""
    try:
        embedder = get_embedder()
        return embedder.embed([text])[0], embedder.name, None
    except Exception as exc:  # any embedder failure degrades the search, never a 500
        log.warning("embedder unavailable for search: %s", exc)
        return None, None, f"{type(exc).__name__}: {exc}"


def search(corpus: Corpus[H], q: Query, clock: Clock) -> Ranked[H]:
    """The corpus's best ``q.limit`` hits for the query in its mode."""
    floor = get_settings().conversation_search_min_similarity
    candidates: dict[str, int] = {}

    def leg(name: str, work: Callable[[], list[H]]) -> list[H]:
        hits = clock.timed(name, work)
        candidates[name] = len(hits)
        return hits

    vector, model = q.vector, q.model
    if q.mode == "semantic" and vector is not None and model is not None:
        hits = leg("semantic", lambda: corpus.by_vector(vector, model, q.limit, floor))
        return Ranked("vector", hits, candidates)
    if q.mode == "semantic" and corpus.by_substring is not None:
        substring = corpus.by_substring
        return Ranked("substring", leg("substring", lambda: substring(q.text, q.limit)), candidates)
    pool = min(max(q.limit * POOL_FACTOR, POOL_MIN), POOL_MAX)
    if q.mode != "hybrid" or vector is None or model is None:
        found = leg("lexical", lambda: corpus.by_lexical(q.text, pool))
        return Ranked(
            "lexical", [replace(h, lexical_rank=i) for i, h in enumerate(found[: q.limit], 1)], candidates
        )
    near, found = both(
        lambda: leg("semantic", lambda: corpus.by_vector(vector, model, pool, -1.0)),
        lambda: leg("lexical", lambda: corpus.by_lexical(q.text, pool)),
        corpus.side_by_side,
    )
    # Ranked over every candidate; a hit the lexical leg did not find is kept only above the floor.
    fused = fuse(near, found, q.lexical_weight, len(near) + len(found), corpus.key)
    hits = [h for h in fused if h.lexical_rank is not None or (h.similarity or 0.0) >= floor]
    return Ranked("hybrid", hinted(hits, q, corpus.said)[: q.limit], candidates)


T = TypeVar("T")
U = TypeVar("U")


def both(first: Callable[[], T], second: Callable[[], U], side_by_side: bool) -> tuple[T, U]:
    """The two legs' answers; read at once when ``side_by_side`` (the first on a thread of its own):
    at a million turns each leg waits on the database for about 100 ms."""
    if not side_by_side:
        return first(), second()
    with ThreadPoolExecutor(max_workers=1) as pool:
        started = pool.submit(first)
        other = second()
        return started.result(), other


def hinted(hits: list[H], q: Query, said: Callable[[H], hints.Origin]) -> list[H]:
    """``hits`` (fused, best first) with each hint's list added: the candidates it picks, in their
    current order, scoring w / (k + their place) more, as a leg's list does. Each list is taken in
    the order the one before left."""
    now = q.now or utcnow()
    spans = [
        (
            datetime.combine(a, datetime.min.time(), now.tzinfo),
            datetime.combine(b, datetime.max.time(), now.tzinfo),
        )
        for a, b in hints.windows(q.text, now)
    ]
    names = {name for h in hits if (name := said(h).name)}
    named = hints.speaker(q.text, names) if names else None
    role = hints.role(q.text)
    picks: list[tuple[float, Callable[[hints.Origin], bool]]] = []
    if spans:
        picks.append((TIME_WEIGHT, lambda s: any(a <= s.ts <= b for a, b in spans)))
    if named:
        picks.append((SPEAKER_WEIGHT, lambda s: s.name == named))
    if role:
        picks.append((ROLE_WEIGHT, lambda s: s.role == role))
    for weight, picked in picks:
        lifted = [h for h in hits if picked(said(h))]
        lift = {id(h): weight / (RRF_K + place) for place, h in enumerate(lifted, 1)}
        # sorted() is stable: hits the list scores alike keep the order they came in
        hits = sorted(
            (replace(h, score=(h.score or 0.0) + lift[id(h)]) if id(h) in lift else h for h in hits),
            key=lambda h: -(h.score or 0.0),
        )
    return hits


def fuse(
    semantic: list[H], found: list[H], lexical_weight: float, limit: int, key: Callable[[H], Hashable]
) -> list[H]:
    """Reciprocal-rank fusion: a document scores (1 - w) / (k + its vector rank) + w / (k + its
    BM25 rank), summed over the legs that found it, w the lexical weight, k ``RRF_K``."""
    merged: dict[Hashable, H] = {}
    for rank, hit in enumerate(semantic, 1):
        merged[key(hit)] = replace(hit, semantic_rank=rank, score=(1 - lexical_weight) / (RRF_K + rank))
    for rank, hit in enumerate(found, 1):
        key_ = key(hit)
        share = lexical_weight / (RRF_K + rank)
        if key_ in merged:
            seen = merged[key_]
            merged[key_] = replace(
                seen, lexical_score=hit.lexical_score, lexical_rank=rank, score=(seen.score or 0.0) + share
            )
        else:
            merged[key_] = replace(hit, lexical_rank=rank, score=share)
    ranked = sorted(merged.values(), key=lambda h: (-(h.score or 0.0), h.semantic_rank or limit + 1))
    return ranked[:limit]
