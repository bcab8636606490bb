"""The memory ops: memory.set, memory.search, memory.pin, memory.cut, memory.reframe,
memory.inspect and memory.give (and ``evidence_turns``, the dashboard's read of where a thread's
evidence was said). A memory thread is served with the seed's names (camelCase); an
op that names a session (``thread_id``, with ``run_id`` and the agent) records what it showed or
touched there.

Writes never call a model: memory.set and memory.reframe store the text and request the embedding
stage's run, which the worker does; until then the thread is found by its words."""

from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar
from uuid import UUID

from pydantic import ConfigDict, Field
from sqlmodel import Session, col, select

from models import db
from models.base import stored, utcnow
from models.memory import BASES, KINDS, WEIGHT_MAX, WEIGHT_MIN, Loom, MemoryEvidence, MemoryThread
from models.stages import MEMORY_EMBEDDING
from ops import search as searching
from ops.caller import Caller
from ops.errors import invalid, not_found
from ops.schemas import ActedIn, Answer, Moment, OpRequest
from pipelines import hybrid, memory, sessions
from workers import ledger, outbox

CONTENT_MAX = 8_000
Item = Annotated[str, Field(min_length=1, max_length=200)]
Items = Annotated[list[Item], Field(default_factory=list, max_length=32)]
Kind = Literal[KINDS]  # type: ignore[valid-type]


class LoomOp(OpRequest):
    loom_id: UUID | None = Field(
        default=None, description="The loom to use (a uuid); the namespace's default loom when omitted."
    )


class SessionOp(LoomOp):
    """An op that may name the agent's session: its conversation thread (and run)."""

    thread_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=256,
        description=(
            "The conversation the agent is in: names its session, where the op records what it showed or "
            "touched."
        ),
    )
    run_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=256,
        description="The interaction run the agent is in (with thread_id).",
    )


# A memory thread's fields as every answer that shows one describes them (memory.*, and the
# threads looms' proposals would write).
Content = Annotated[str, Field(description="What is remembered, as text.")]
KindShown = Annotated[
    str,
    Field(
        description=(
            "Semantic (a fact), Episodic (something that happened) or Procedural (how to do something)."
        )
    ),
]
Weight = Annotated[
    float,
    Field(
        description=(
            "How much it matters, 0-1 (a new thread 0.5); night weaving raises it when used, lowers it "
            "when not."
        )
    ),
]
Subjects = Annotated[
    list[str],
    Field(
        description=(
            "Who or what it is about (user ids, names); tapestries favour threads about the session's "
            "subjects."
        )
    ),
]
Tags = Annotated[list[str], Field(description="Free labels for filtering and reading.")]
Cues = Annotated[
    list[str],
    Field(
        description=(
            "Words that, said as whole words in a session, bring the thread back through memory.suggest."
        )
    ),
]
Until = Annotated[
    Moment | None,
    Field(description="When it stops being true: past it, the thread is neither returned nor woven."),
]
Basis = Annotated[
    str,
    Field(
        description=(
            "Where it came from: Said (memory.set), Reframed, Extracted (from messages) or Woven (by "
            "night weaving)."
        )
    ),
]


class ThreadShape(Answer):
    id: UUID = Field(
        description=(
            "The memory thread's id (a uuid): what memory.pin, cut, reframe and give take as `thread`."
        )
    )
    loomId: UUID = Field(description="The loom (memory space) the thread belongs to.")  # noqa: N815 (the seed's names)
    content: Content
    kind: KindShown
    weight: Weight
    subjects: Subjects
    tags: Tags
    cues: Cues
    until: Until
    basis: Basis
    pinned: bool = Field(description="Whether it is pinned: tapestries woven from now carry it first.")
    evidenceIds: list[int] = Field(
        description="The ids of the evidence (messages, actions) it was extracted from."
    )  # noqa: N815
    dateCreated: Moment = Field(description="When it was written.")  # noqa: N815
    dateUpdated: Moment = Field(description="When it last changed.")  # noqa: N815


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
        outbox.wake(MEMORY_EMBEDDING, [run_id])


class SetRequest(SessionOp):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "content": "Ana prefers release notes as a bulleted list.",
                    "kind": "Semantic",
                    "weight": 0.7,
                    "subjects": ["ana"],
                    "tags": ["preferences"],
                    "cues": ["release notes"],
                }
            ]
        }
    )

    content: str = Field(
        min_length=1,
        max_length=CONTENT_MAX,
        description="What to remember (1-8,000 characters). A text that reads as high is not stored.",
    )
    kind: Kind = Field(default="Semantic", description="Semantic (default), Episodic or Procedural.")
    weight: float = Field(
        default=0.5, ge=WEIGHT_MIN, le=WEIGHT_MAX, description="How much it matters, 0-1 (default 0.5)."
    )
    subjects: Items = Field(description="Who or what it is about (at most 32 of at most 200 characters).")
    tags: Items = Field(description="Free labels (at most 32 of at most 200 characters).")
    cues: Items = Field(
        description="Words that bring it back when said in a session (at most 32 of at most 200 characters)."
    )
    until: datetime | None = Field(
        default=None, description="When it stops being true (with its UTC offset); never when omitted."
    )


class SetAnswer(Answer):
    namespace: ActedIn
    stored: bool = Field(description="Whether the thread was written.")
    reason: Literal["high_sensitivity"] | None = Field(
        default=None,
        description=(
            "high_sensitivity: the text reads as holding a secret or personal number, and nothing was stored."
        ),
    )
    thread: ThreadShape | None = Field(default=None, description="The memory thread written.")


def set_thread(caller: Caller, req: SetRequest) -> SetAnswer:
    """Remember one thing: write a memory thread to the loom.

    A fact, an event or a procedure, with its weight, subjects, tags, cues and an optional end
    (`until`). Screened first: a text that reads as holding a secret answers `stored: false`,
    `reason: "high_sensitivity"` and stores nothing. Embedded by the worker; found by its words at
    once. Naming a session (`thread_id`) records it as woven there.

    Errors: 404 for a loom not in this namespace."""
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
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"query": "how does Ana want release notes?", "limit": 5, "kinds": ["Semantic"]}]
        }
    )

    kinds: list[Kind] | None = Field(
        default=None,
        max_length=len(KINDS),
        description="Only threads of these kinds (Semantic, Episodic, Procedural).",
    )


class MemoryHit(ThreadShape):
    similarity: float | None = Field(
        description="The vector leg's cosine similarity, when that leg found it."
    )
    lexicalScore: float | None = Field(description="The BM25 score, when the lexical leg found it.")  # noqa: N815
    score: float | None = Field(description="The hybrid fused score (higher is better).")


class SearchAnswer(Answer):
    namespace: ActedIn
    loomId: UUID = Field(description="The loom searched.")  # noqa: N815
    mode: Literal["hybrid", "vector", "lexical"] = Field(
        description="How the search ran: hybrid, vector or lexical (no embedder: the lexical leg alone)."
    )
    hits: list[MemoryHit] = Field(description="The matching memory threads, best first.")


def search_threads(caller: Caller, req: SearchRequest) -> SearchAnswer:
    """Search the loom's memory threads by meaning and by words.

    The same hybrid search as conversation.search over the loom's live threads (not cut, not past
    their `until`), optionally of some kinds. Naming a session records the hits as recalled there.

    Errors: 404 for a loom not in this namespace."""
    clock = hybrid.Clock()
    q = hybrid.query(req.query, req.search_mode, req.limit, req.lexical_weight, clock)
    with db.session() as s:
        loom = the_loom(s, caller, req)
        found = hybrid.search(memory.corpus(s, loom.id, utcnow()), q, clock)
        mode, hits = found.mode, found.hits
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
    # Published as ``thread``; named for what it is here, beside the conversation's ``thread_id``.
    memory_thread: UUID = Field(alias="thread", description="The memory thread's id (a uuid).")


class ThreadAnswer(Answer):
    namespace: ActedIn
    thread: ThreadShape = Field(description="The memory thread as it now is.")


def _the_thread(s: Session, loom: Loom, thread_id: UUID) -> MemoryThread:
    found = s.exec(
        select(MemoryThread)
        .where(
            col(MemoryThread.id) == thread_id, col(MemoryThread.loom_id) == loom.id, *memory.live(utcnow())
        )
        .with_for_update()
    ).first()
    if found is None:
        raise not_found("no such memory thread in this loom", "thread")
    return found


def pin(caller: Caller, req: ThreadRequest) -> ThreadAnswer:
    """Pin a memory thread: the tapestries woven from now carry it first.

    Errors: 404 for a thread not in this loom."""
    with db.session() as s:
        loom = the_loom(s, caller, req)
        thread = _the_thread(s, loom, req.memory_thread)
        thread.pinned, thread.updated_at = True, utcnow()
        s.add(thread)
        record(s, loom, req, {"held_thread_ids": [thread.id], "woven_thread_ids": [thread.id]})
        return ThreadAnswer(namespace=loom.namespace, thread=shown(thread))


def cut(caller: Caller, req: ThreadRequest) -> ThreadAnswer:
    """Cut a memory thread: it is no longer woven into tapestries nor returned.

    Errors: 404 for a thread not in this loom."""
    with db.session() as s:
        loom = the_loom(s, caller, req)
        thread = _the_thread(s, loom, req.memory_thread)
        thread.cut_at = thread.updated_at = utcnow()
        s.add(thread)
        record(s, loom, req, {"woven_thread_ids": [thread.id]})
        return ThreadAnswer(namespace=loom.namespace, thread=shown(thread))


class ReframeRequest(ThreadRequest):
    content: str = Field(
        min_length=1,
        max_length=CONTENT_MAX,
        description="The thread's new text (1-8,000 characters); it replaces the old and is embedded again.",
    )


class ReframeAnswer(Answer):
    namespace: ActedIn
    reframed: bool = Field(description="Whether the text was replaced.")
    reason: Literal["high_sensitivity"] | None = Field(
        default=None, description="high_sensitivity: the new text reads as high, and the thread is unchanged."
    )
    thread: ThreadShape = Field(description="The memory thread as it now is.")


def reframe(caller: Caller, req: ReframeRequest) -> ReframeAnswer:
    """Replace a memory thread's text (its basis becomes Reframed).

    The new text is screened (one that reads as high answers `reframed: false` and changes nothing)
    and embedded again.

    Errors: 404 for a thread not in this loom."""
    run = None
    with db.session() as s:
        loom = the_loom(s, caller, req)
        thread = _the_thread(s, loom, req.memory_thread)
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
    limit: int = Field(
        default=50, ge=1, le=200, description="How many threads to answer (1-200, default 50)."
    )
    kinds: list[Kind] | None = Field(
        default=None,
        max_length=len(KINDS),
        description="Only threads of these kinds (Semantic, Episodic, Procedural).",
    )


class InspectAnswer(Answer):
    namespace: ActedIn
    loomId: UUID = Field(description="The loom inspected.")  # noqa: N815
    threads: list[ThreadShape] = Field(description="The loom's live threads, heaviest first.")


def inspect(caller: Caller, req: InspectRequest) -> InspectAnswer:
    """List the loom's live memory threads, heaviest first.

    To see what the loom remembers; optionally of some kinds. Naming a session records them as seen
    there (shown, not used).

    Errors: 404 for a loom not in this namespace."""
    with db.session() as s:
        loom = the_loom(s, caller, req)
        query = select(MemoryThread).where(col(MemoryThread.loom_id) == loom.id, *memory.live(utcnow()))
        if req.kinds:
            query = query.where(col(MemoryThread.kind).in_(req.kinds))
        threads = s.exec(
            query.order_by(col(MemoryThread.weight).desc(), col(MemoryThread.created_at).desc()).limit(
                req.limit
            )
        ).all()
        record(s, loom, req, {"seen_thread_ids": [stored(thread.id) for thread in threads]})
        return InspectAnswer(
            namespace=loom.namespace, loomId=loom.id, threads=[shown(thread) for thread in threads]
        )


class EvidenceTurn(Answer):
    id: int
    thread_id: str  # the conversation the turn was said in
    msg_id: str
    role: str
    ts: Moment


def evidence_turns(caller: Caller, namespace: str, loom_id: UUID, ids: list[int]) -> list[EvidenceTurn]:
    """Where the loom's evidence of these ids (a thread's ``evidenceIds``) was said: the dashboard
    links each to its conversation. Not an op: it reads what memory.inspect and memory.search
    already served the caller, so it takes the same bounds and adds no words of the turns."""
    caller.may_call("memory.inspect")
    with db.session() as s:
        loom = the_loom(s, caller, LoomOp(namespace=namespace, loom_id=loom_id))
        rows = s.exec(
            select(
                col(MemoryEvidence.id),
                col(MemoryEvidence.thread_id),
                col(MemoryEvidence.msg_id),
                col(MemoryEvidence.role),
                col(MemoryEvidence.ts),
            ).where(col(MemoryEvidence.loom_id) == loom.id, col(MemoryEvidence.id).in_(ids))
        ).all()
    return [EvidenceTurn(id=i, thread_id=t, msg_id=m, role=r, ts=ts) for i, t, m, r, ts in rows]


class GiveRequest(ThreadRequest):
    thread_id: str = Field(
        min_length=1, max_length=256, description="The conversation both agents are in (1-256 characters)."
    )
    to_agent: str = Field(
        min_length=1,
        max_length=128,
        description="The agent to give the thread to (not the caller's own agent).",
    )


class GiveAnswer(Answer):
    namespace: ActedIn
    thread: ThreadShape = Field(description="The memory thread given.")
    session: UUID = Field(description="The receiving agent's session (a uuid), where the gift waits.")


def give(caller: Caller, req: GiveRequest) -> GiveAnswer:
    """Give a memory thread to another agent of the same run.

    The thread waits in the receiving agent's session of the same conversation and run until its next
    context.pack offers it.

    Errors: 404 for a thread not in this loom; 422 for giving to the calling agent itself."""
    if req.to_agent == req.agent:
        raise invalid("an agent gives a thread to another agent, not to itself", "to_agent")
    with db.session() as s:
        loom = the_loom(s, caller, req)
        thread = _the_thread(s, loom, req.memory_thread)
        receiver = sessions.open_session(
            s, loom, sessions.Where(req.thread_id, req.run_id, req.to_agent), utcnow()
        )
        sessions.record(s, receiver, {"pending_gift_thread_ids": [thread.id]}, utcnow())
        return GiveAnswer(namespace=loom.namespace, thread=shown(thread), session=receiver.id)
