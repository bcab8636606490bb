"""Memory threads: writing them, their vectors, and finding them. Plain functions in the caller's
transaction; the ops request the embedding run, whose reads and writes are
``pipelines.memory_embedding``.

A memory thread is screened like a turn: one that reads as high is never stored. Its text is
embedded (the first ``LOOM_EMBED_MAX_CHARS`` characters, as a turn's) and has lexemes, so it is
found by the same hybrid search as turns: a vector leg (cosine, exact over the loom: a loom is a
small corpus) and a BM25 leg (``pipelines.lexical``, the loom its own corpus), fused and floored
by ``pipelines.hybrid`` (by thread id). A thread that was cut, or whose ``until`` has
passed, is neither woven nor returned."""

import re
from dataclasses import dataclass, field
from datetime import datetime
from uuid import UUID, uuid4

from pgvector import Vector
from sqlalchemy import ColumnElement, func
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import defer
from sqlalchemy.orm.interfaces import LoaderOption
from sqlmodel import Session, col, or_, select

from models.base import utcnow
from models.memory import BASES, Kind, Loom, MemoryEvidence, MemoryThread
from models.queries import memory as queries
from models.queries import search as search_queries
from models.settings import get_settings
from pipelines import embedding, hints, hybrid, keys, lexical, screening

DEFAULT_LOOM = "default"
REFRAMED = BASES[3]


def default_loom(s: Session, namespace: str) -> Loom:
    """The namespace's default loom, made on first use."""
    s.exec(
        insert(Loom)
        .values(id=uuid4(), namespace=namespace, name=DEFAULT_LOOM, is_default=True, created_at=utcnow())
        .on_conflict_do_nothing()
    )
    return s.exec(select(Loom).where(col(Loom.namespace) == namespace, col(Loom.is_default).is_(True))).one()


def loom_of(s: Session, namespace: str, loom_id: UUID | None) -> Loom | None:
    """The loom asked for, if it is the namespace's; the default loom when none is named."""
    if loom_id is None:
        return default_loom(s, namespace)
    return s.exec(select(Loom).where(col(Loom.id) == loom_id, col(Loom.namespace) == namespace)).first()


def live(now: datetime):
    """The memory threads that are woven and returned: not cut, and not past their ``until``."""
    return (
        col(MemoryThread.cut_at).is_(None),
        or_(col(MemoryThread.until).is_(None), col(MemoryThread.until) > now),
    )


@dataclass
class NewMemory:
    content: str
    kind: str
    weight: float
    basis: str
    subjects: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    cues: list[str] = field(default_factory=list)
    until: datetime | None = None
    agent: str | None = None
    run_id: str | None = None
    evidence_ids: list[int] = field(default_factory=list)
    source_key: str | None = None  # an extraction's: writing the same fact twice is one thread


def embedded_text(content: str) -> str:
    return embedding.embedding_text(content, get_settings().embed_max_chars)


def write(s: Session, loom: Loom, new: NewMemory, now: datetime) -> MemoryThread | None:
    """Store a memory thread (None, storing nothing, when its text reads as high). With a
    ``source_key`` already written in this loom, the thread that key wrote is answered."""
    if screening.is_high(new.content):
        return None
    if new.source_key is not None:
        found = s.exec(
            select(MemoryThread).where(
                col(MemoryThread.loom_id) == loom.id, col(MemoryThread.source_key) == new.source_key
            )
        ).first()
        if found is not None:
            return found
    row = MemoryThread(
        row_id=s.execute(queries.NEXT_THREAD_ROW_ID).scalar_one(),
        id=uuid4(),
        loom_id=loom.id,
        namespace=loom.namespace,
        digest=keys.digest(embedded_text(new.content)),
        created_at=now,
        updated_at=now,
        **vars(new),
    )
    s.add(row)
    s.flush()
    return row


def reframe(s: Session, thread: MemoryThread, content: str, now: datetime) -> bool:
    """Write the thread's new text in place, its basis Reframed (False, changing nothing, when it
    reads as high); its vector is made again (its digest changes)."""
    if screening.is_high(content):
        return False
    thread.content = content
    thread.basis = REFRAMED
    thread.digest = keys.digest(embedded_text(content))
    thread.vector = None
    thread.model = None
    thread.embedded_at = None
    thread.updated_at = now
    s.add(thread)
    s.flush()
    return True


# --- finding them ------------------------------------------------------------------------------


def mentions(text: str, phrase: str) -> bool:
    """The phrase appears in the text as whole words, whatever the case (a cue said, a subject
    named)."""
    return re.search(rf"(?<!\w){re.escape(phrase.strip())}(?!\w)", text, re.IGNORECASE) is not None


@dataclass(frozen=True)
class Found:
    thread: MemoryThread
    similarity: float | None = None
    lexical_score: float | None = None
    semantic_rank: int | None = None
    lexical_rank: int | None = None
    score: float | None = None

    @property
    def key(self) -> UUID:
        return self.thread.id


def by_vector(
    s: Session, loom_id: UUID, vector: list[float], model: str, limit: int, floor: float, now: datetime
) -> list[Found]:
    """The loom's live threads nearest the query's vector (made by the same model), at or above
    the similarity floor."""
    # pgvector's comparator methods are unknown to SQLAlchemy's type of a mapped column
    distance: ColumnElement[float] = col(MemoryThread.vector).cosine_distance(vector)  # type: ignore[attr-defined]
    rows = s.exec(
        select(MemoryThread, (1 - distance).label("similarity"))
        .where(col(MemoryThread.loom_id) == loom_id, col(MemoryThread.model) == model, *live(now))
        .order_by(distance)
        .limit(limit)
    ).all()
    return [Found(thread, float(similarity)) for thread, similarity in rows if similarity >= floor]


def by_lexical(s: Session, loom_id: UUID, query: str, limit: int, now: datetime) -> list[Found]:
    """The loom's live threads by BM25, the loom their corpus."""
    lexemes = list(dict.fromkeys(lexical.query_lexemes(s, query)))
    scope = search_queries.LIVE_IN_LOOM
    scored = lexical.search(
        s, lexemes, scope, {"loom": loom_id, "now": now}, limit, scope, search_queries.MEMORY_THREADS
    )
    threads = {
        t.row_id: t
        for t in s.exec(select(MemoryThread).where(col(MemoryThread.row_id).in_([x.id for x in scored])))
    }
    return [Found(threads[x.id], lexical_score=x.score) for x in scored]


def corpus(s: Session, loom_id: UUID, now: datetime) -> hybrid.Corpus[Found]:
    """The loom's live threads as ``pipelines.hybrid`` searches them."""
    return hybrid.Corpus(
        by_vector=lambda vector, model, limit, floor: by_vector(s, loom_id, vector, model, limit, floor, now),
        by_lexical=lambda text, limit: by_lexical(s, loom_id, text, limit, now),
        key=lambda hit: hit.key,
        said=lambda hit: hints.Origin(hit.thread.created_at),  # when it was learned; said by no one
    )


def similarities(s: Session, ids: list[UUID], vector: list[float], model: str) -> dict[UUID, float]:
    """Each of these threads' cosine similarity to the query's vector, for those with a vector
    ``model`` made."""
    params = {"vector": Vector(vector).to_text(), "ids": ids, "model": model}
    return {row[0]: float(row[1]) for row in s.execute(queries.THREAD_SIMILARITIES, params).all()}


# --- the memory ops' reads and changes ---------------------------------------------------------


def thread_of(s: Session, loom_id: UUID, thread_id: UUID, now: datetime) -> MemoryThread | None:
    """The loom's live thread of that id, locked for the caller's transaction."""
    return s.exec(
        select(MemoryThread)
        .where(col(MemoryThread.id) == thread_id, col(MemoryThread.loom_id) == loom_id, *live(now))
        .with_for_update()
    ).first()


def pin(s: Session, thread: MemoryThread, now: datetime) -> None:
    """Pinned, the thread comes first in the tapestries woven from now."""
    thread.pinned, thread.updated_at = True, now
    s.add(thread)


def cut(s: Session, thread: MemoryThread, now: datetime) -> None:
    """Cut, the thread is neither woven nor returned again."""
    thread.cut_at = thread.updated_at = now
    s.add(thread)


def end(s: Session, thread: MemoryThread, until: datetime, now: datetime) -> None:
    """The thread stops being true at ``until`` (a newer one superseded it): from then on it is
    neither woven nor returned, and stays for history."""
    thread.until, thread.updated_at = until, now
    s.add(thread)


def heaviest(
    s: Session, loom_id: UUID, kinds: list[Kind] | None, limit: int, now: datetime
) -> list[MemoryThread]:
    """The loom's live threads (of ``kinds``, when given), heaviest, then newest, first."""
    query = select(MemoryThread).where(col(MemoryThread.loom_id) == loom_id, *live(now))
    if kinds:
        query = query.where(col(MemoryThread.kind).in_(kinds))
    order = (col(MemoryThread.weight).desc(), col(MemoryThread.created_at).desc())
    return list(s.exec(query.order_by(*order).limit(limit)))


def without_vector() -> LoaderOption:
    """Threads loaded without their vectors (most of a thread's bytes), for a reader that needs
    none."""
    # sqlmodel's col() is typed as a Mapped; defer() takes the instrumented attribute it is
    return defer(col(MemoryThread.vector))  # type: ignore[arg-type]


def tapestry_candidates(
    s: Session, loom_id: UUID, subjects: list[str], rest: int, now: datetime
) -> list[MemoryThread]:
    """The live threads of the loom a tapestry may take, without their vectors (a tapestry reads
    none, and the vectors are most of a thread's bytes): every pinned one and every one whose text
    or subjects hold one of ``subjects`` (case folded; the caller ranks them exactly), and of the
    others the ``rest`` first in the order a tapestry takes them (facts before episodes, heavier,
    newer). A loom's other threads could only follow those, so it is never read whole."""
    base = (
        select(MemoryThread).where(col(MemoryThread.loom_id) == loom_id, *live(now)).options(without_vector())
    )
    text = func.lower(col(MemoryThread.content) + " " + func.array_to_string(col(MemoryThread.subjects), " "))
    about = [func.strpos(text, subject.casefold()) > 0 for subject in subjects]
    chosen = list(s.exec(base.where(or_(col(MemoryThread.pinned), *about))))
    order = (
        col(MemoryThread.kind) == "Episodic",
        col(MemoryThread.weight).desc(),
        col(MemoryThread.created_at).desc(),
    )
    others = s.exec(
        base.where(~col(MemoryThread.pinned), *(~match for match in about)).order_by(*order).limit(rest)
    )
    return [*chosen, *others]


def cued_threads(s: Session, loom_id: UUID, said: str, now: datetime) -> list[MemoryThread]:
    """The loom's live threads that ``said`` may have said a cue of: a cue's first words (its key)
    are a run of words of the text, found by the cues' index (migration 0038), not by reading every
    cue. The caller checks the cue whole (``mentions``)."""
    keys = func.loom_cue_keys(col(MemoryThread.cues))
    query = select(MemoryThread).where(
        col(MemoryThread.loom_id) == loom_id, keys.op("&&")(func.loom_said_keys(said)), *live(now)
    )
    return list(s.exec(query.options(without_vector())))


def still_live(s: Session, ids: list[UUID], now: datetime) -> list[MemoryThread]:
    """Those of these threads that are live still, in the order given (a gift cut since it was
    given is not offered)."""
    found = {t.id: t for t in s.exec(select(MemoryThread).where(col(MemoryThread.id).in_(ids), *live(now)))}
    return [found[i] for i in dict.fromkeys(ids) if i in found]


def live_of(s: Session, loom_id: UUID, ids: list[UUID], now: datetime) -> set[UUID]:
    """Which of these ids are live threads of the loom."""
    query = select(col(MemoryThread.id)).where(
        col(MemoryThread.loom_id) == loom_id, col(MemoryThread.id).in_(ids), *live(now)
    )
    return set(s.exec(query))


def search(
    s: Session, loom_id: UUID, q: hybrid.Query, clock: hybrid.Clock, kinds: list[Kind] | None, now: datetime
) -> hybrid.Ranked[Found]:
    """The loom's live threads by the hybrid search, those of ``kinds`` when given."""
    found = hybrid.search(corpus(s, loom_id, now), q, clock)
    if kinds:
        found.hits = [hit for hit in found.hits if hit.thread.kind in kinds]
    return found


@dataclass(frozen=True)
class Said:
    """Where a piece of the loom's evidence was said (no word of it)."""

    id: int
    thread_id: str  # the conversation
    msg_id: str
    role: str
    ts: datetime


def evidence_said(s: Session, loom_id: UUID, ids: list[int]) -> list[Said]:
    """Where the loom's evidence of these ids was said."""
    rows = s.exec(
        # sqlmodel's select() is typed for at most 4 columns
        select(  # type: ignore[call-overload]
            col(MemoryEvidence.id),
            col(MemoryEvidence.thread_id),
            col(MemoryEvidence.msg_id),
            col(MemoryEvidence.role),
            col(MemoryEvidence.ts),
        ).where(col(MemoryEvidence.loom_id) == loom_id, col(MemoryEvidence.id).in_(ids))
    ).all()
    return [Said(*row) for row in rows]


# --- looms ---------------------------------------------------------------------------------------


def looms_of(s: Session, namespace: str) -> list[Loom]:
    """The namespace's looms, oldest first (its default one made on first use)."""
    default_loom(s, namespace)
    query = (
        select(Loom).where(col(Loom.namespace) == namespace).order_by(col(Loom.created_at), col(Loom.name))
    )
    return list(s.exec(query))


def create_loom(s: Session, namespace: str, name: str, weaving_mode: str, now: datetime) -> tuple[Loom, bool]:
    """The namespace's loom of that name, and whether this call made it (one of that name is kept
    as it is)."""
    made = s.exec(
        insert(Loom)
        .values(id=uuid4(), namespace=namespace, name=name, weaving_mode=weaving_mode, created_at=now)
        .on_conflict_do_nothing()
        .returning(col(Loom.id))
    ).first()
    loom = s.exec(select(Loom).where(col(Loom.namespace) == namespace, col(Loom.name) == name)).one()
    return loom, made is not None


def set_weaving_mode(s: Session, loom: Loom, weaving_mode: str) -> None:
    loom.weaving_mode = weaving_mode
    s.add(loom)
