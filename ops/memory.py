"""The memory ops: memory.set, memory.search, memory.pin, memory.cut, memory.reframe,
memory.inspect and memory.give. A memory thread is served with the seed's names (camelCase); an
op that names a session (``thread_id``, with ``run_id`` and the agent) records what it showed or
touched there.

Writes never call a model: memory.set and memory.reframe store the text and request the embedding
stage's run, which the worker does; until then the thread is found by its words."""

from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar
from uuid import UUID

from pydantic import Field
from sqlmodel import Session, select

from models import db
from models.base import utcnow
from models.memory import BASES, KINDS, WEIGHT_MAX, WEIGHT_MIN, Loom, MemoryThread
from models.settings import get_settings
from ops import search as searching
from ops.caller import Caller
from ops.errors import invalid, not_found
from ops.schemas import Answer, Moment, OpRequest
from pipelines import memory, search, sessions
from workers import ledger, outbox
from workers.stages.memory_embedding import MEMORY_EMBEDDING

CONTENT_MAX = 8_000
Item = Annotated[str, Field(min_length=1, max_length=200)]
Items = Annotated[list[Item], Field(default_factory=list, max_length=32)]
Kind = Literal[KINDS]  # type: ignore[valid-type]


class LoomOp(OpRequest):
    loom_id: UUID | None = None  # the namespace's default loom when omitted


class SessionOp(LoomOp):
    """An op that may name the agent's session: its conversation thread (and run)."""

    thread_id: str | None = Field(default=None, min_length=1, max_length=256)
    run_id: str | None = Field(default=None, min_length=1, max_length=256)


class ThreadShape(Answer):
    id: UUID
    loomId: UUID  # noqa: N815 (the seed's names)
    content: str
    kind: str
    weight: float
    subjects: list[str]
    tags: list[str]
    cues: list[str]
    until: Moment | None
    basis: str
    pinned: bool
    evidenceIds: list[int]  # noqa: N815
    dateCreated: Moment  # noqa: N815
    dateUpdated: Moment  # noqa: N815


Shape = TypeVar("Shape", bound=ThreadShape)


def shown(thread: MemoryThread, shape: type[Shape] = ThreadShape, **more: Any) -> Shape:
    """The thread as served: a ``ThreadShape``, or a subclass of it with its ``more`` fields (a
    search hit's scores, a suggestion's cue)."""
    return shape(
        id=thread.id,
        loomId=thread.loom_id,
        content=thread.content,
        kind=thread.kind,
        weight=thread.weight,
        subjects=list(thread.subjects),
        tags=list(thread.tags),
        cues=list(thread.cues),
        until=thread.until,
        basis=thread.basis,
        pinned=thread.pinned,
        evidenceIds=list(thread.evidence_ids),
        dateCreated=thread.created_at,
        dateUpdated=thread.updated_at,
        **more,
    )


def the_loom(s: Session, caller: Caller, req: LoomOp) -> Loom:
    loom = memory.loom_of(s, caller.namespace(req.namespace), req.loom_id)
    if loom is None:
        raise not_found("no such loom in this namespace", "loom_id")
    return loom


def record(s: Session, loom: Loom, req: SessionOp, lists: dict[str, list[UUID]]) -> None:
    """Record into the request's session, when it names one."""
    if req.thread_id is not None:
        session = sessions.open_session(
            s, loom, sessions.Where(req.thread_id, req.run_id, req.agent), utcnow()
        )
        sessions.record(s, session, lists, utcnow())


def embed_later(s: Session, thread: MemoryThread) -> int | None:
    """Request the thread's embedding run (in the caller's transaction); the run to wake."""
    run = ledger.request(s, MEMORY_EMBEDDING, thread.row_id, thread.digest[:16], {})
    return run.id if run.status == "pending" else None


def wake(run_id: int | None) -> None:
    if run_id is not None:
        outbox.wake(MEMORY_EMBEDDING.name, [run_id])


class SetRequest(SessionOp):
    content: str = Field(min_length=1, max_length=CONTENT_MAX)
    kind: Kind = "Semantic"
    weight: float = Field(default=0.5, ge=WEIGHT_MIN, le=WEIGHT_MAX)
    subjects: Items
    tags: Items
    cues: Items
    until: datetime | None = None


class SetAnswer(Answer):
    namespace: str
    stored: bool
    reason: Literal["high_sensitivity"] | None = None
    thread: ThreadShape | None = None


def set_thread(caller: Caller, req: SetRequest) -> SetAnswer:
    with db.session() as s:
        loom = the_loom(s, caller, req)
        new = memory.NewMemory(
            content=req.content,
            kind=req.kind,
            weight=req.weight,
            basis=BASES[0],  # Said
            subjects=req.subjects,
            tags=req.tags,
            cues=req.cues,
            until=req.until,
            agent=req.agent,
            run_id=req.run_id,
        )
        thread = memory.write(s, loom, new, utcnow())
        if thread is None:
            return SetAnswer(namespace=loom.namespace, stored=False, reason="high_sensitivity", thread=None)
        run = embed_later(s, thread)
        record(s, loom, req, {"woven_thread_ids": [thread.id]})
        answer = SetAnswer(namespace=loom.namespace, stored=True, reason=None, thread=shown(thread))
    wake(run)
    return answer


class SearchRequest(searching.Ranking, SessionOp):
    kinds: list[Kind] | None = Field(default=None, max_length=len(KINDS))


class MemoryHit(ThreadShape):
    similarity: float | None
    lexicalScore: float | None  # noqa: N815
    score: float | None


class SearchAnswer(Answer):
    namespace: str
    loomId: UUID  # noqa: N815
    mode: Literal["hybrid", "vector", "lexical"]
    hits: list[MemoryHit]


def search_threads(caller: Caller, req: SearchRequest) -> SearchAnswer:
    settings = get_settings()
    vector = model = None
    if req.search_mode != "lexical":
        vector, model, _ = searching.query_vector(req.query)
    pool = min(max(req.limit * searching.POOL_FACTOR, searching.POOL_MIN), searching.POOL_MAX)
    now = utcnow()
    with db.session() as s:
        loom = the_loom(s, caller, req)
        semantic = found = []
        if vector is not None:
            floor = settings.conversation_search_min_similarity if req.search_mode == "semantic" else -1.0
            semantic = memory.by_vector(s, loom.id, vector, model, pool, floor, now)
        if req.search_mode != "semantic" or vector is None:
            found = memory.by_lexical(s, loom.id, req.query, pool, now)
        if req.search_mode == "semantic" and vector is not None:
            mode, hits = "vector", semantic[: req.limit]
        elif vector is None or req.search_mode == "lexical":
            mode, hits = "lexical", found[: req.limit]
        else:
            mode = "hybrid"
            hits = search.fuse(
                semantic, found, req.lexical_weight, searching.RRF_K, req.limit, key=lambda hit: hit.key
            )
        if req.kinds:
            hits = [hit for hit in hits if hit.thread.kind in req.kinds]
        record(s, loom, req, {"recalled_thread_ids": [hit.thread.id for hit in hits]})
        return SearchAnswer(
            namespace=loom.namespace,
            loomId=loom.id,
            mode=mode,
            hits=[
                shown(
                    hit.thread,
                    MemoryHit,
                    similarity=hit.similarity,
                    lexicalScore=hit.lexical_score,
                    score=hit.score,
                )
                for hit in hits
            ],
        )


class ThreadRequest(SessionOp):
    thread: UUID  # the memory thread


class ThreadAnswer(Answer):
    namespace: str
    thread: ThreadShape


def _the_thread(s: Session, loom: Loom, thread_id: UUID) -> MemoryThread:
    found = s.exec(
        select(MemoryThread)
        .where(MemoryThread.id == thread_id, MemoryThread.loom_id == loom.id, *memory.live(utcnow()))
        .with_for_update()
    ).first()
    if found is None:
        raise not_found("no such memory thread in this loom", "thread")
    return found


def pin(caller: Caller, req: ThreadRequest) -> ThreadAnswer:
    """Hold a thread close: the tapestries woven from now on carry it first."""
    with db.session() as s:
        loom = the_loom(s, caller, req)
        thread = _the_thread(s, loom, req.thread)
        thread.pinned, thread.updated_at = True, utcnow()
        s.add(thread)
        record(s, loom, req, {"held_thread_ids": [thread.id], "woven_thread_ids": [thread.id]})
        return ThreadAnswer(namespace=loom.namespace, thread=shown(thread))


def cut(caller: Caller, req: ThreadRequest) -> ThreadAnswer:
    """Cut a thread: it is no longer woven nor returned."""
    with db.session() as s:
        loom = the_loom(s, caller, req)
        thread = _the_thread(s, loom, req.thread)
        thread.cut_at = thread.updated_at = utcnow()
        s.add(thread)
        record(s, loom, req, {"woven_thread_ids": [thread.id]})
        return ThreadAnswer(namespace=loom.namespace, thread=shown(thread))


class ReframeRequest(ThreadRequest):
    content: str = Field(min_length=1, max_length=CONTENT_MAX)


class ReframeAnswer(Answer):
    namespace: str
    reframed: bool
    reason: Literal["high_sensitivity"] | None = None
    thread: ThreadShape


def reframe(caller: Caller, req: ReframeRequest) -> ReframeAnswer:
    """Say a thread anew: its text is replaced (its basis becomes Reframed) and embedded again."""
    run = None
    with db.session() as s:
        loom = the_loom(s, caller, req)
        thread = _the_thread(s, loom, req.thread)
        if not memory.reframe(s, thread, req.content, utcnow()):
            return ReframeAnswer(
                namespace=loom.namespace, reframed=False, reason="high_sensitivity", thread=shown(thread)
            )
        thread.basis = "Reframed"
        run = embed_later(s, thread)
        record(s, loom, req, {"woven_thread_ids": [thread.id]})
        answer = ReframeAnswer(namespace=loom.namespace, reframed=True, reason=None, thread=shown(thread))
    wake(run)
    return answer


class InspectRequest(SessionOp):
    limit: int = Field(default=50, ge=1, le=200)
    kinds: list[Kind] | None = Field(default=None, max_length=len(KINDS))


class InspectAnswer(Answer):
    namespace: str
    loomId: UUID  # noqa: N815
    threads: list[ThreadShape]


def inspect(caller: Caller, req: InspectRequest) -> InspectAnswer:
    """The loom's live threads, heaviest first: shown only (``seen``, not used)."""
    with db.session() as s:
        loom = the_loom(s, caller, req)
        query = select(MemoryThread).where(MemoryThread.loom_id == loom.id, *memory.live(utcnow()))
        if req.kinds:
            query = query.where(MemoryThread.kind.in_(req.kinds))
        threads = s.exec(
            query.order_by(MemoryThread.weight.desc(), MemoryThread.created_at.desc()).limit(req.limit)
        ).all()
        record(s, loom, req, {"seen_thread_ids": [thread.id for thread in threads]})
        return InspectAnswer(
            namespace=loom.namespace, loomId=loom.id, threads=[shown(thread) for thread in threads]
        )


class GiveRequest(ThreadRequest):
    thread_id: str = Field(min_length=1, max_length=256)  # the conversation both agents are in
    to_agent: str = Field(min_length=1, max_length=128)


class GiveAnswer(Answer):
    namespace: str
    thread: ThreadShape
    session: UUID  # the receiving agent's session, where the gift waits


def give(caller: Caller, req: GiveRequest) -> GiveAnswer:
    """Give a thread to another agent of the same run: it waits in that agent's session
    (``pendingGiftThreadIds``) until its next context.pack offers it."""
    if req.to_agent == req.agent:
        raise invalid("an agent gives a thread to another agent, not to itself", "to_agent")
    with db.session() as s:
        loom = the_loom(s, caller, req)
        thread = _the_thread(s, loom, req.thread)
        receiver = sessions.open_session(
            s, loom, sessions.Where(req.thread_id, req.run_id, req.to_agent), utcnow()
        )
        sessions.record(s, receiver, {"pending_gift_thread_ids": [thread.id]}, utcnow())
        return GiveAnswer(namespace=loom.namespace, thread=shown(thread), session=receiver.id)
