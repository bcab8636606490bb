"""The memory ops: memory.set, memory.search, memory.pin, memory.cut, memory.reframe,
memory.inspect and memory.give (and ``evidence_turns``, the dashboard's read of where a thread's
evidence was said). A memory thread is served with the seed's names (camelCase); an
op that names a session (``thread_id``, with ``run_id`` and the agent) records what it showed or
touched there.

Writes never call a model: memory.set and memory.reframe store the text and request the embedding
stage's run, which the worker does; until then the thread is found by its words."""

from datetime import datetime
from typing import Annotated, Literal
from uuid import UUID

from pydantic import ConfigDict, Field
from sqlmodel import Session

from models import db
from models.base import stored, utcnow
from models.memory import BASES, KINDS, WEIGHT_MAX, WEIGHT_MIN, Kind, Loom, MemoryThread
from models.stages import MEMORY_EMBEDDING
from ops.caller import Caller
from ops.errors import invalid, not_found
from ops.schemas import ActedIn, Answer, Moment, Ranking
from ops.schemas.memory import LoomOp, SessionOp, ThreadShape, record, shown, the_loom
from pipelines import hybrid, memory, sessions
from workers import ledger, outbox

CONTENT_MAX = 8_000
Item = Annotated[str, Field(min_length=1, max_length=200)]
Items = Annotated[list[Item], Field(default_factory=list, max_length=32)]
Kinds = Annotated[
    list[Kind] | None,
    Field(max_length=len(KINDS), description="Only threads of these kinds (Semantic, Episodic, Procedural)."),
]


def embed_later(s: Session, thread: MemoryThread) -> int | None:
    """Request the thread's embedding run (in the caller's transaction); the run to wake."""
    run = ledger.request(s, MEMORY_EMBEDDING, stored(thread.row_id), thread.digest[:16], {})
    return run.id if run.status == "pending" else None


def wake(run_id: int | None) -> None:
    if run_id is not None:
        outbox.wake(MEMORY_EMBEDDING, [run_id])


class MemorySetRequest(SessionOp):
    model_config = ConfigDict(
        title="SetRequest",
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
        },
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


class MemorySetAnswer(Answer):
    model_config = ConfigDict(title="SetAnswer")

    namespace: ActedIn
    stored: bool = Field(description="Whether the thread was written.")
    reason: Literal["high_sensitivity"] | None = Field(
        default=None,
        description=(
            "high_sensitivity: the text reads as holding a secret or personal number, and nothing was stored."
        ),
    )
    thread: ThreadShape | None = Field(default=None, description="The memory thread written.")


def set_thread(caller: Caller, req: MemorySetRequest) -> MemorySetAnswer:
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
            return MemorySetAnswer(
                namespace=loom.namespace, stored=False, reason="high_sensitivity", thread=None
            )
        run = embed_later(s, thread)
        record(s, loom, req, {"woven_thread_ids": [thread.id]})
        answer = MemorySetAnswer(namespace=loom.namespace, stored=True, reason=None, thread=shown(thread))
    wake(run)
    return answer


class MemorySearchRequest(Ranking, SessionOp):
    model_config = ConfigDict(
        title="SearchRequest",
        json_schema_extra={
            "examples": [{"query": "how does Ana want release notes?", "limit": 5, "kinds": ["Semantic"]}]
        },
    )

    kinds: Kinds = None


class MemoryHit(ThreadShape):
    similarity: float | None = Field(
        description="The vector leg's cosine similarity, when that leg found it."
    )
    lexicalScore: float | None = Field(description="The BM25 score, when the lexical leg found it.")  # noqa: N815
    score: float | None = Field(description="The hybrid fused score (higher is better).")


class MemorySearchAnswer(Answer):
    model_config = ConfigDict(title="SearchAnswer")

    namespace: ActedIn
    loomId: UUID = Field(description="The loom searched.")  # noqa: N815
    mode: Literal["hybrid", "vector", "lexical"] = Field(
        description="How the search ran: hybrid, vector or lexical (no embedder: the lexical leg alone)."
    )
    hits: list[MemoryHit] = Field(description="The matching memory threads, best first.")


def search_threads(caller: Caller, req: MemorySearchRequest) -> MemorySearchAnswer:
    """Search the loom's memory threads by meaning and by words.

    The same hybrid search as conversation.search over the loom's live threads (not cut, not past
    their `until`), optionally of some kinds. Naming a session records the hits as recalled there.

    Errors: 404 for a loom not in this namespace."""
    clock = hybrid.Clock()
    q = hybrid.query(req.query, req.search_mode, req.limit, req.lexical_weight, clock, req.now)
    with db.session() as s:
        loom = the_loom(s, caller, req)
        found = memory.search(s, loom.id, q, clock, req.kinds, utcnow())
        record(s, loom, req, {"recalled_thread_ids": [hit.thread.id for hit in found.hits]})
        return MemorySearchAnswer(
            namespace=loom.namespace,
            loomId=loom.id,
            mode=found.mode,
            hits=[
                shown(
                    hit.thread,
                    MemoryHit,
                    similarity=hit.similarity,
                    lexicalScore=hit.lexical_score,
                    score=hit.score,
                )
                for hit in found.hits
            ],
        )


class ThreadRequest(SessionOp):
    # Published as ``thread``; named for what it is here, beside the conversation's ``thread_id``.
    memory_thread: UUID = Field(alias="thread", description="The memory thread's id (a uuid).")


class MemoryThreadAnswer(Answer):
    model_config = ConfigDict(title="ThreadAnswer")

    namespace: ActedIn
    thread: ThreadShape = Field(description="The memory thread as it now is.")


def _the_thread(s: Session, loom: Loom, thread_id: UUID) -> MemoryThread:
    found = memory.thread_of(s, loom.id, thread_id, utcnow())
    if found is None:
        raise not_found("no such memory thread in this loom", "thread")
    return found


def pin(caller: Caller, req: ThreadRequest) -> MemoryThreadAnswer:
    """Pin a memory thread: the tapestries woven from now carry it first.

    Errors: 404 for a thread not in this loom."""
    with db.session() as s:
        loom = the_loom(s, caller, req)
        thread = _the_thread(s, loom, req.memory_thread)
        memory.pin(s, thread, utcnow())
        record(s, loom, req, {"held_thread_ids": [thread.id], "woven_thread_ids": [thread.id]})
        return MemoryThreadAnswer(namespace=loom.namespace, thread=shown(thread))


def cut(caller: Caller, req: ThreadRequest) -> MemoryThreadAnswer:
    """Cut a memory thread: it is no longer woven into tapestries nor returned.

    Errors: 404 for a thread not in this loom."""
    with db.session() as s:
        loom = the_loom(s, caller, req)
        thread = _the_thread(s, loom, req.memory_thread)
        memory.cut(s, thread, utcnow())
        record(s, loom, req, {"woven_thread_ids": [thread.id]})
        return MemoryThreadAnswer(namespace=loom.namespace, thread=shown(thread))


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
        run = embed_later(s, thread)
        record(s, loom, req, {"woven_thread_ids": [thread.id]})
        answer = ReframeAnswer(namespace=loom.namespace, reframed=True, reason=None, thread=shown(thread))
    wake(run)
    return answer


class InspectRequest(SessionOp):
    limit: int = Field(
        default=50, ge=1, le=200, description="How many threads to answer (1-200, default 50)."
    )
    kinds: Kinds = None


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
        threads = memory.heaviest(s, loom.id, req.kinds, req.limit, utcnow())
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
        said = memory.evidence_said(s, loom.id, ids)
    return [EvidenceTurn(id=e.id, thread_id=e.thread_id, msg_id=e.msg_id, role=e.role, ts=e.ts) for e in said]


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
        receiver = sessions.give(
            s, loom, sessions.Where(req.thread_id, req.run_id, req.to_agent), thread.id, utcnow()
        )
        return GiveAnswer(namespace=loom.namespace, thread=shown(thread), session=receiver.id)
