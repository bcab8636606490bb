"""The memory plane's shared request and answer fields, declared once (beside every op's, in
``ops.schemas``): the loom an op acts in and the session it names, a memory thread and a LoomSession
as every answer shows them, and a working memory block as working_memory.get and context.pack
answer it. A memory thread and a LoomSession are served with the seed's names (camelCase)."""

from datetime import datetime
from typing import Annotated, Any, TypeVar, overload
from uuid import UUID

from pydantic import Field
from sqlmodel import Session

from models.base import utcnow
from models.memory import Loom, LoomSession, MemoryThread
from models.working_memory import WorkingMemory, WorkingMemoryRevision
from ops.caller import Caller
from ops.errors import not_found
from ops.schemas import ActedIn, Answer, Moment, OpRequest
from pipelines import memory, sessions, working_memory

# The interaction run of a session an op names by its conversation (or coding session).
SessionRun = Annotated[
    str | None, Field(min_length=1, max_length=256, description="The interaction run of the session.")
]
# A working memory block's project or branch: '' for none.
BlockName = Field(default="", max_length=128, pattern=r"^[^\x00-\x1f\x7f]*$")


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


def where(req: SessionOp) -> sessions.Where | None:
    """The session the request names, if it names one."""
    return None if req.thread_id is None else sessions.Where(req.thread_id, req.run_id, req.agent)


def the_loom(s: Session, caller: Caller, req: LoomOp) -> Loom:
    loom = memory.loom_of(s, caller.namespace(req.namespace), req.loom_id)
    if loom is None:
        raise not_found("no such loom in this namespace", "loom_id")
    return loom


def record(s: Session, loom: Loom, req: SessionOp, lists: dict[str, list[UUID]]) -> None:
    """Record into the request's session, when it names one."""
    sessions.record_in(s, loom, where(req), lists, utcnow())


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


# Overloaded, as a default for a parameter typed by a type variable is refused (python/mypy#3737).
@overload
def shown(thread: MemoryThread) -> ThreadShape: ...
@overload
def shown(thread: MemoryThread, shape: type[Shape], **more: Any) -> Shape: ...
def shown(thread: MemoryThread, shape: type[ThreadShape] = ThreadShape, **more: Any) -> ThreadShape:
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


class ProposedThread(Answer):
    content: Content
    kind: KindShown
    weight: Weight
    subjects: Subjects
    tags: Tags
    cues: Cues
    until: Until
    basis: Basis


class SessionObject(Answer):
    loomId: UUID = Field(description="The loom the session remembers with.")  # noqa: N815 (the seed's names, throughout)
    interactionProcessId: UUID = Field(
        description=(
            "The interaction run: the turns' run_id when it is a uuid, else a stable uuid v5 of it (a turn "
            "with no run belongs to its thread's interaction)."
        )
    )  # noqa: N815
    agentName: str = Field(description="The agent whose time with the loom this is.")  # noqa: N815
    agentId: UUID | None = Field(description="The agent's uuid, when known.")  # noqa: N815
    tapestry: str | None = Field(
        description=(
            "The memory woven for the session on its first context.pack, then fixed; null until woven."
        )
    )
    tapestryWovenAt: Moment | None = Field(description="When the tapestry was woven.")  # noqa: N815
    subjects: list[str] = Field(
        description=(
            "Whom the session is about: whoever sent messages in the thread, and the subjects context.pack "
            "named."
        )
    )
    tapestryThreadIds: list[UUID] = Field(description="The memory threads woven into the tapestry.")  # noqa: N815
    suggestedThreadIds: list[UUID] = Field(description="The threads memory.suggest offered in this session.")  # noqa: N815
    heldBackThreadIds: list[UUID] = Field(
        description="Threads memory.suggest found but held back (not similar enough to what was said)."
    )  # noqa: N815
    cuedThreadIds: list[UUID] = Field(
        description="Threads brought back by one of their cues (once a session)."
    )  # noqa: N815
    heldThreadIds: list[UUID] = Field(description="Threads pinned (memory.pin) in this session.")  # noqa: N815
    pendingGiftThreadIds: list[UUID] = Field(
        description="Threads another agent gave (memory.give), waiting for this session's next context.pack."
    )  # noqa: N815
    recalledThreadIds: list[UUID] = Field(description="Threads memory.search returned in this session.")  # noqa: N815
    wovenThreadIds: list[UUID] = Field(
        description="Threads this session wrote or changed (memory.set, pin, cut, reframe)."
    )  # noqa: N815
    seenThreadIds: list[UUID] = Field(description="Threads memory.inspect showed in this session.")  # noqa: N815
    pendingProposals: list[ProposedThread] = Field(
        description="Facts extraction proposed (a loom in Suggest mode), waiting for the next context.pack."
    )  # noqa: N815
    lastTurnAt: Moment | None = Field(description="When the session's newest turn was said.")  # noqa: N815
    lastSequence: int = Field(description="The thread sequence number of the session's newest turn.")  # noqa: N815
    awaitingNight: bool = Field(description="Whether turns wait for night weaving to consolidate them.")  # noqa: N815
    consolidatedUpToSequence: int = Field(
        description="Night weaving has consolidated the turns up to this sequence number."
    )  # noqa: N815
    judgedThreadIds: list[UUID] = Field(
        description="Suggested threads night weaving has judged used or unused (each once)."
    )  # noqa: N815
    consolidatedByNightWeavingId: UUID | None = Field(
        description="The night weaving that last consolidated the session."
    )  # noqa: N815
    knownThreadIds: list[UUID] = Field(description="Every thread shown or touched in the session.")  # noqa: N815
    tenantId: UUID = Field(description="The namespace's uuid (a uuid v5 of its name).")  # noqa: N815
    id: UUID = Field(description="The session's id (a uuid).")
    dateCreated: Moment = Field(description="When the session was opened.")  # noqa: N815
    dateUpdated: Moment = Field(description="When the session last changed.")  # noqa: N815


def proposed(proposal: dict[str, Any]) -> ProposedThread:
    """A pending proposal as stored (``pipelines.extraction.proposal``'s JSON)."""
    until = proposal["until"]
    return ProposedThread(
        content=proposal["content"],
        kind=proposal["kind"],
        weight=proposal["weight"],
        subjects=proposal["subjects"],
        tags=proposal["tags"],
        cues=proposal["cues"],
        until=datetime.fromisoformat(until) if until else None,
        basis=proposal["basis"],
    )


def session_object(session: LoomSession) -> SessionObject:
    """The session as the seed's object: each field is the snake-case column of the same name."""
    return SessionObject(
        loomId=session.loom_id,
        interactionProcessId=session.interaction_process_id,
        agentName=session.agent_name,
        agentId=session.agent_id,
        tapestry=session.tapestry,
        tapestryWovenAt=session.tapestry_woven_at,
        subjects=session.subjects,
        tapestryThreadIds=session.tapestry_thread_ids,
        suggestedThreadIds=session.suggested_thread_ids,
        heldBackThreadIds=session.held_back_thread_ids,
        cuedThreadIds=session.cued_thread_ids,
        heldThreadIds=session.held_thread_ids,
        pendingGiftThreadIds=session.pending_gift_thread_ids,
        recalledThreadIds=session.recalled_thread_ids,
        wovenThreadIds=session.woven_thread_ids,
        seenThreadIds=session.seen_thread_ids,
        pendingProposals=[proposed(proposal) for proposal in session.pending_proposals],
        lastTurnAt=session.last_turn_at,
        lastSequence=session.last_sequence,
        awaitingNight=session.awaiting_night,
        consolidatedUpToSequence=session.consolidated_up_to_sequence,
        judgedThreadIds=session.judged_thread_ids,
        consolidatedByNightWeavingId=session.consolidated_by_night_weaving_id,
        knownThreadIds=session.known_thread_ids,
        tenantId=session.tenant_id,
        id=session.id,
        dateCreated=session.date_created,
        dateUpdated=session.date_updated,
    )


class BlockAnswer(Answer):
    namespace: ActedIn
    user_id: str = Field(description="The user the block belongs to.")
    project: str = Field(description="The block's project ('' for none).")
    branch: str = Field(description="The block's branch ('' for none).")
    revision: int = Field(description="The block's revision number (1 for the first write).")
    content: str = Field(description="The block's text; blank when withheld.")
    withheld: bool = Field(
        description=(
            "Whether the content reads as high (a secret or a personal number): kept, but read back blank."
        )
    )
    session_id: str | None = Field(description="The session that wrote this revision.")
    updated_at: Moment = Field(description="When this revision was written.")


Block = TypeVar("Block", bound=BlockAnswer)


@overload  # as shown is
def block_answer(block: WorkingMemory, revision: WorkingMemory | WorkingMemoryRevision) -> BlockAnswer: ...
@overload
def block_answer(
    block: WorkingMemory, revision: WorkingMemory | WorkingMemoryRevision, shape: type[Block], **more: Any
) -> Block: ...
def block_answer(
    block: WorkingMemory,
    revision: WorkingMemory | WorkingMemoryRevision,
    shape: type[BlockAnswer] = BlockAnswer,
    **more: Any,
) -> BlockAnswer:
    """The block as read at ``revision`` (the block itself for its latest), blank when withheld."""
    withheld = working_memory.withheld(revision)
    return shape(
        namespace=block.namespace,
        user_id=block.user_id,
        project=block.project,
        branch=block.branch,
        revision=revision.revision,
        content="" if withheld else revision.content,
        withheld=withheld,
        session_id=revision.session_id,
        updated_at=revision.created_at if isinstance(revision, WorkingMemoryRevision) else block.updated_at,
        **more,
    )
