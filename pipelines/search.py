"""The turns as a corpus of ``pipelines.hybrid`` (conversation.search, saved-message search): cosine
similarity over embedded turns (HNSW), BM25 over the turns' full text (``pipelines.lexical``), and
the substring fallback for when the embedder cannot answer. None ever returns a turn that reads as
high: such a turn has no embedding row, and the others filter on the screening verdict.

Every leg answers one hit per message: the vector leg one per live embedding row (agents that
logged the same text share it), the others the best (or newest) copy of each message they read. A
search scoped to an agent finds the messages of which that agent holds a live copy."""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from pgvector.sqlalchemy import HALFVEC
from sqlalchemy import ColumnElement, Select, cast, exists, func
from sqlalchemy.orm import aliased
from sqlmodel import Session, col, select

from models import db
from models.conversation import EMBEDDED_ROLES, Embedding, Turn
from models.queries import search as queries
from models.settings import get_settings
from pipelines import hints, hybrid, lexical

SelectT = TypeVar("SelectT", bound=Select[*tuple[Any, ...]])  # a query of turns, narrowed by the filters


@dataclass(frozen=True)
class Filters:
    namespaces: list[str]
    thread_id: str | None = None
    run_id: str | None = None
    role: str | None = None
    agent: str | None = None
    saved_by: str | None = None  # only the messages this user saved (search_saved_messages)


@dataclass(frozen=True)
class Hit:
    namespace: str
    thread_id: str
    msg_id: str
    role: str
    agent: str
    ts: datetime
    content: str
    similarity: float | None  # the vector leg's cosine similarity, when it found the message
    name: str | None = None  # the speaker's, when the turn was appended with one
    lexical_score: float | None = None  # the BM25 score, when the lexical leg found it
    semantic_rank: int | None = None  # 1-based place in each leg's list
    lexical_rank: int | None = None
    score: float | None = None  # the fused score of a hybrid search
    saved_at: datetime | None = None  # when its owner saved it, for a saved message


def _filtered(query: SelectT, f: Filters) -> SelectT:
    query = query.where(
        col(Turn.namespace).in_(f.namespaces), col(Turn.deleted_at).is_(None), col(Turn.sensitivity) != "high"
    )
    if f.thread_id:
        query = query.where(col(Turn.thread_id) == f.thread_id)
    if f.run_id:
        query = query.where(col(Turn.run_id) == f.run_id)
    if f.role:
        query = query.where(col(Turn.role) == f.role)
    if f.agent:
        query = query.where(_held_by(f.agent, Turn))
    if f.saved_by:
        query = query.where(col(Turn.is_saved).is_(True), col(Turn.user_id) == f.saved_by)
    return query


def _held_by(agent: str, source: type[Turn] | type[Embedding]) -> ColumnElement[bool]:
    """The message of a row of ``source`` (turns or embeddings) has a live copy of ``agent``'s."""
    copy = aliased(Turn)
    return exists().where(
        col(copy.namespace) == source.namespace,
        col(copy.thread_id) == source.thread_id,
        col(copy.msg_id) == source.msg_id,
        col(copy.agent) == agent,
        col(copy.deleted_at).is_(None),
    )


# A scope of at most this many embedded messages is searched exactly, by reading every vector in
# it, whatever its share of the index: its results are then the true nearest, whatever the page asked
# and however the graph was built. The size is where an exact scan stays within the vector leg's
# share of the latency budget (some 40 ms of the hybrid's 150): bench/index_params.py measured the
# scan of the embedding rows at 21 ms for 20,000 vectors, 50 ms for 50,000 and 117 ms for 100,000.
# That holds because a row keeps its vector inline and sends its text out of line (migration 0039):
# the LongMemEval file's 10,866 vectors took 34 ms to scan while two thirds of them lived in the
# TOAST table, 10 ms since. A larger scope is searched through the HNSW index.
EXACT_SCAN_ROWS = 40_000


def _embedded(model: str, f: Filters) -> list[ColumnElement[bool]]:
    """The live vectors of ``model`` in scope, by the embedding rows' own columns (each row carries
    the namespace, thread, role and run of the copy it serves), so that the scope is read through
    the embeddings' index without visiting the turns."""
    conditions: list[ColumnElement[bool]] = [
        col(Embedding.vector).is_not(None),
        col(Embedding.model) == model,
        col(Embedding.deleted_at).is_(None),
        col(Embedding.namespace).in_(f.namespaces),
    ]
    for column in ("thread_id", "run_id", "role"):
        if getattr(f, column):
            conditions.append(col(getattr(Embedding, column)) == getattr(f, column))
    if f.saved_by:
        conditions += [col(Embedding.is_saved).is_(True), col(Embedding.user_id) == f.saved_by]
    return conditions


def _indexed_distance(vector: list[float]) -> ColumnElement[float]:
    """The distance the HNSW index orders by: between half-precision copies of the vectors (the
    index's expression, migration 0041; the hit's similarity is still read at full precision)."""
    half = HALFVEC(get_settings().embed_dimensions)
    return cast(col(Embedding.vector), half).cosine_distance(cast(vector, half))


def by_vector(
    s: Session, vector: list[float], model: str, f: Filters, limit: int, min_similarity: float
) -> list[Hit]:
    """Turns nearest the query's vector among those embedded by the same ``model`` (another model's
    vectors live in another space; the re-embedding pass brings them over).

    The index is one graph over every namespace, and filters are applied to what its walk returns:
    a small scope beside a large one (a namespace, a thread, a run) would get whichever of its rows
    the walk met before giving up, not its nearest, and even a scope that is the whole index may be
    led past its nearest by the graph. A scope of at most ``EXACT_SCAN_ROWS`` is scanned exactly
    instead, so its results depend neither on what other tenants hold nor on the page asked for."""
    # pgvector's comparator methods are unknown to SQLAlchemy's type of a mapped column
    distance: ColumnElement[float] = col(Embedding.vector).cosine_distance(vector)  # type: ignore[attr-defined]
    embedded = _embedded(model, f)
    # The scope by the embedding rows alone: rows whose turn has expired are counted too, which can
    # only send a scope to the index, never a large one to an exact scan.
    in_scope = [*embedded, *([_held_by(f.agent, Embedding)] if f.agent else [])]
    counted = select(col(Embedding.id)).where(*in_scope)
    s.execute(queries.ONE_PROCESS)  # measured and scanned by one process
    # Counted only as far as it decides: past the bound, the scope goes to the index.
    size = s.exec(select(func.count()).select_from(counted.limit(EXACT_SCAN_ROWS + 1).subquery())).one()
    # The candidates, measured from the embedding rows alone (they carry the scope's columns;
    # reading each one's turn too doubled an exact scan's time), in a materialised step of their own.
    candidates = select(col(Embedding.turn_id), distance.label("distance")).where(*in_scope)
    if size > EXACT_SCAN_ROWS:
        # Through the index, walking on until enough rows pass the filters. The walk keeps the
        # configured candidates whatever the page asked, and they are ranked at full precision
        # (the index orders half-precision copies), so a short page is the start of a long one.
        ef_search = get_settings().conversation_search_ef_search
        s.execute(queries.ITERATIVE_SCAN)
        s.execute(queries.EF_SEARCH, {"ef_search": ef_search})
        candidates = candidates.order_by(_indexed_distance(vector)).limit(max(ef_search, limit))
    # Otherwise every vector of the scope is measured: distances computed in a materialised step
    # cannot be read off the index in order.
    measured = candidates.cte("measured").prefix_with("MATERIALIZED")
    # OFFSET 0 keeps the ordered list a step of its own, which the turns join in its order (a nested
    # loop the page's LIMIT stops) instead of hashing every turn of the scope.
    nearest = (
        select(measured.c.turn_id, measured.c.distance).order_by(measured.c.distance).offset(0).subquery()
    )
    query = _filtered(
        # sqlmodel's select() is typed for at most 4 columns: a hit's are more
        select(*HIT_COLUMNS, (1 - nearest.c.distance).label("similarity"))  # type: ignore[call-overload]
        .join(nearest, nearest.c.turn_id == col(Turn.id))
        .order_by(nearest.c.distance)
        .limit(limit),
        f,
    )
    rows = s.exec(query).all()
    hits = [_hit(row, float(row.similarity)) for row in rows if row.similarity >= min_similarity]
    return newest_on_ties(hits, lambda hit: hit.similarity)


def _escape_like(term: str) -> str:
    return term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


COPIES_READ = 4  # the fallback reads this many turns a hit, so agents' copies of a message still fill it


def by_substring(s: Session, query_text: str, f: Filters, limit: int) -> list[Hit]:
    """Turns whose content holds ``query_text`` (case-insensitive, wildcards matched literally),
    newest first. ``ILIKE '%term%'`` is served by the trigram index for terms of 3+ characters."""
    s.execute(queries.CUSTOM_PLANS)  # planned for this very term
    query = (
        # sqlmodel's select() is typed for at most 4 columns: a hit's are more
        select(*HIT_COLUMNS)  # type: ignore[call-overload]
        .where(
            queries.SUBSTRING_INDEX_PREDICATE,
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


# What a hit is made of: a turn's columns, read as plain rows (not whole Turn objects, whose
# metadata and other columns a search of 250 candidates would parse for nothing).
HIT_COLUMNS = (
    col(Turn.id),
    col(Turn.namespace),
    col(Turn.thread_id),
    col(Turn.msg_id),
    col(Turn.role),
    col(Turn.name),
    col(Turn.agent),
    col(Turn.ts),
    col(Turn.content),
    col(Turn.saved_at),
)


def _hit(turn, similarity: float | None, lexical_score: float | None = None) -> Hit:
    """The hit of a row of HIT_COLUMNS."""
    return Hit(
        turn.namespace,
        turn.thread_id,
        turn.msg_id,
        turn.role,
        turn.agent,
        turn.ts,
        turn.content,
        similarity,
        turn.name,
        lexical_score,
        saved_at=turn.saved_at,
    )


def scope_sql(f: Filters) -> tuple[str, dict]:
    """The filters as a SQL condition on turns ``t`` (for the lexical leg's statements)."""
    conditions = [queries.IN_NAMESPACES]
    params: dict[str, str | list[str]] = {"namespaces": f.namespaces}
    for column in ("thread_id", "run_id", "role"):
        if getattr(f, column):
            conditions.append(queries.COLUMN_IS.format(column=column))
            params[column] = getattr(f, column)
    if f.agent:
        conditions.append(queries.HELD_BY_AGENT)
        params["agent"] = f.agent
    if f.saved_by:
        conditions.append(queries.SAVED_BY)
        params["saved_by"] = f.saved_by
    return " AND ".join(conditions), params


def by_lexical(s: Session, query_text: str, f: Filters, limit: int) -> list[Hit]:
    """Turns by BM25 over their whole text, best first, one per message (its best-scoring copy)."""
    lexemes = list(dict.fromkeys(lexical.query_lexemes(s, query_text)))
    scope, params = scope_sql(f)
    # One user's saved messages are a corpus of their own, whatever else narrows the search: its
    # statistics come from them alone.
    if f.saved_by:
        own_corpus, documents = queries.SAVED_CORPUS, queries.MESSAGES
    else:
        own_corpus, documents = None, queries.TURNS
    scored = lexical.search(s, lexemes, scope, params, limit * COPIES_READ, own_corpus, documents)
    if not scored:
        return []
    # sqlmodel's select() is typed for at most 4 columns: a hit's are more
    read = select(*HIT_COLUMNS).where(col(Turn.id).in_([x.id for x in scored]))  # type: ignore[call-overload]
    turns = {t.id: t for t in s.exec(read)}
    hits: dict[tuple[str, str, str], Hit] = {}
    for x in scored:  # best first: the first copy of a message stands for it
        turn = turns[x.id]
        hits.setdefault((turn.namespace, turn.thread_id, turn.msg_id), _hit(turn, None, x.score))
    return newest_on_ties(list(hits.values()), lambda hit: hit.lexical_score)[:limit]


def newest_on_ties(hits: list[Hit], relevance: Callable[[Hit], float | None]) -> list[Hit]:
    """Best first; among equally relevant hits (copies of one text, in threads of their own) the
    newest first, as both legs rank them, so that fusing the legs keeps that order."""

    def order(hit: Hit) -> tuple[float, float, str, str]:
        score = relevance(hit)
        assert score is not None  # every hit of a leg carries that leg's score
        return (-score, -hit.ts.timestamp(), hit.thread_id, hit.msg_id)

    return sorted(hits, key=order)


def corpus(f: Filters) -> hybrid.Corpus[Hit]:
    """The turns in ``f``'s scope as ``pipelines.hybrid`` searches them: one hit per message. Each
    leg reads in a session of its own, so the hybrid runs the two side by side."""

    def own_session(read: Callable[..., list[Hit]]) -> Callable[..., list[Hit]]:
        def leg(*args: Any) -> list[Hit]:
            with db.session() as s:
                return read(s, *args)

        return leg

    return hybrid.Corpus(
        by_vector=own_session(
            lambda s, vector, model, limit, floor: by_vector(s, vector, model, f, limit, floor)
        ),
        by_lexical=own_session(lambda s, text, limit: by_lexical(s, text, f, limit)),
        key=lambda hit: (hit.namespace, hit.thread_id, hit.msg_id),
        said=lambda hit: hints.Origin(hit.ts, hit.role, hit.name),
        by_substring=own_session(lambda s, text, limit: by_substring(s, text, f, limit)),
        side_by_side=True,
    )
