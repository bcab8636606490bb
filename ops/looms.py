"""looms.list, looms.create, looms.update, looms.sessions (also ``GET /looms/by-id/{id}/sessions``)
and context.pack.

A LoomSession is served as the seed's object: every field by its exact name, camelCase, arrays
``[]`` when empty and scalars ``null``, uuids, UTC datetimes (``session_object``)."""

from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID, uuid4

from pydantic import ConfigDict, Field
from sqlalchemy import tuple_
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import col, select

from models import db
from models.base import utcnow
from models.memory import AUTO, WEAVING_MODES, Loom, LoomSession, MemoryThread
from models.settings import get_settings
from ops import cursors, working_memory
from ops.caller import Caller
from ops.errors import invalid
from ops.memory import (
    Basis,
    Content,
    Cues,
    KindShown,
    LoomOp,
    Subjects,
    Tags,
    ThreadShape,
    Until,
    Weight,
    shown,
    the_loom,
)
from ops.schemas import ActedIn, Answer, Moment, OpRequest
from pipelines import memory, night_weaving, sessions, tapestry


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


class ListRequest(OpRequest):
    pass


class LoomShape(Answer):
    id: UUID = Field(description="The loom's id (a uuid): what the memory ops take as loom_id.")
    name: str = Field(description="The loom's name, unique in its namespace.")
    isDefault: bool = Field(
        description="Whether it is the namespace's default loom (the one used when an op names none)."
    )  # noqa: N815
    weavingMode: Literal[WEAVING_MODES] = Field(
        description=(
            "Auto: extraction writes memory threads; Suggest: it proposes them to the session instead."
        )
    )  # type: ignore[valid-type]  # noqa: N815
    dateCreated: Moment = Field(description="When the loom was made.")  # noqa: N815


def loom_shape(loom: Loom) -> LoomShape:
    return LoomShape(
        id=loom.id,
        name=loom.name,
        isDefault=loom.is_default,
        weavingMode=loom.weaving_mode,
        dateCreated=loom.created_at,
    )


class ListAnswer(Answer):
    namespace: ActedIn
    looms: list[LoomShape] = Field(description="The namespace's looms (its default one made on first use).")


def list_looms(caller: Caller, req: ListRequest) -> ListAnswer:
    """List the namespace's looms (memory spaces).

    Each loom's id, name, whether it is the default and its weaving mode. The default loom is made on
    first use."""
    namespace = caller.namespace(req.namespace)
    with db.session() as s:
        memory.default_loom(s, namespace)
        looms = s.exec(
            select(Loom)
            .where(col(Loom.namespace) == namespace)
            .order_by(col(Loom.created_at), col(Loom.name))
        ).all()
        return ListAnswer(namespace=namespace, looms=[loom_shape(loom) for loom in looms])


class CreateRequest(OpRequest):
    name: str = Field(
        min_length=1,
        max_length=128,
        description=(
            "The new loom's name (1-128 characters); an existing name answers that loom with created false."
        ),
    )
    weaving_mode: Literal[WEAVING_MODES] = Field(
        default=AUTO,
        description=(
            "Auto (default): extraction writes memory threads; Suggest: extraction proposes them to the "
            "session."
        ),
    )  # type: ignore[valid-type]


class LoomAnswer(Answer):
    namespace: ActedIn
    created: bool = Field(
        description="Whether a loom was made (false: the namespace had one of that name, answered as it is)."
    )
    loom: LoomShape = Field(description="The loom.")


def create(caller: Caller, req: CreateRequest) -> LoomAnswer:
    """Make another loom (memory space) in the namespace.

    A loom of the same name is answered as it is, with `created: false`. `weaving_mode` says whether
    extraction writes memory threads (`Auto`) or proposes them to the session (`Suggest`)."""
    namespace = caller.namespace(req.namespace)
    with db.session() as s:
        made = s.exec(
            insert(Loom)
            .values(
                id=uuid4(),
                namespace=namespace,
                name=req.name,
                weaving_mode=req.weaving_mode,
                created_at=utcnow(),
            )
            .on_conflict_do_nothing()
            .returning(col(Loom.id))
        ).first()
        loom = s.exec(select(Loom).where(col(Loom.namespace) == namespace, col(Loom.name) == req.name)).one()
        return LoomAnswer(namespace=namespace, created=made is not None, loom=loom_shape(loom))


class UpdateRequest(LoomOp):
    weaving_mode: Literal[WEAVING_MODES] = Field(description="The loom's new weaving mode: Auto or Suggest.")  # type: ignore[valid-type]


def update(caller: Caller, req: UpdateRequest) -> LoomAnswer:
    """Change how a loom takes what extraction finds (its weaving mode).

    `Auto`: extraction writes memory threads; `Suggest`: it proposes them to the session, whose next
    context.pack offers them. The default loom's when `loom_id` is omitted.

    Errors: 404 for a loom not in this namespace."""
    with db.session() as s:
        loom = the_loom(s, caller, req)
        loom.weaving_mode = req.weaving_mode
        s.add(loom)
        return LoomAnswer(namespace=loom.namespace, created=False, loom=loom_shape(loom))


class SessionsRequest(LoomOp):
    agent_name: str | None = Field(
        default=None, min_length=1, max_length=128, description="Only this agent's sessions."
    )
    awaiting_night: bool | None = Field(
        default=None, description="Only sessions that do (true) or do not (false) wait for night weaving."
    )
    limit: int = Field(
        default=50, ge=1, le=200, description="How many sessions a page holds (1-200, default 50)."
    )
    cursor: str | None = Field(
        default=None,
        max_length=200,
        description="The nextCursor of the previous page; omitted for the first page.",
    )


class SessionsAnswer(Answer):
    namespace: ActedIn
    loomId: UUID = Field(description="The loom whose sessions these are.")  # noqa: N815
    sessions: list[SessionObject] = Field(description="The loom's sessions, newest first.")
    nextCursor: str | None = Field(description="Pass it as cursor for the next page; null on the last page.")  # noqa: N815


# A page ends at a session: its (date_created, id).
SESSIONS_CURSOR = cursors.Kind("looms.sessions", (datetime, UUID))


def list_sessions(caller: Caller, req: SessionsRequest) -> SessionsAnswer:
    """List a loom's LoomSessions (one agent's time in one run), newest first.

    Each session as a whole object: its tapestry, the threads it was shown and touched, and its night
    weaving state; filtered by agent name or by whether it waits for night weaving, a page at a time.
    Also served as `GET /looms/by-id/{loom_id}/sessions`.

    Errors: 404 for a loom not in this namespace; 422 for a cursor this server did not issue."""
    with db.session() as s:
        loom = the_loom(s, caller, req)
        query = select(LoomSession).where(col(LoomSession.loom_id) == loom.id)
        if req.agent_name is not None:
            query = query.where(col(LoomSession.agent_name) == req.agent_name)
        if req.awaiting_night is not None:
            query = query.where(col(LoomSession.awaiting_night) == req.awaiting_night)
        scope = (loom.namespace, loom.id, req.agent_name, req.awaiting_night)
        position = tuple_(col(LoomSession.date_created), col(LoomSession.id))
        if req.cursor is not None:
            query = query.where(position < tuple_(*cursors.decode(SESSIONS_CURSOR, scope, req.cursor)))
        rows = s.exec(
            query.order_by(col(LoomSession.date_created).desc(), col(LoomSession.id).desc()).limit(
                req.limit + 1
            )
        ).all()
        page = rows[: req.limit]
        return SessionsAnswer(
            namespace=loom.namespace,
            loomId=loom.id,
            sessions=[session_object(row) for row in page],
            nextCursor=(
                cursors.encode(SESSIONS_CURSOR, scope, (page[-1].date_created, page[-1].id))
                if len(rows) > req.limit
                else None
            ),
        )


def night_changes(
    caller: Caller, namespace: str, loom_id: UUID, session_ids: list[UUID]
) -> list[night_weaving.NightChange]:
    """What each night changed for these sessions of the loom (the episodes it wrote, each judged
    thread's weight before and after), oldest first: the dashboard shows it under each session.
    Not an op: it reads what looms.sessions served the caller, with the same bounds."""
    caller.may_call("looms.sessions")
    with db.session() as s:
        loom = the_loom(s, caller, LoomOp(namespace=namespace, loom_id=loom_id))
        return night_weaving.changes(s, loom.id, session_ids)


class PackRequest(LoomOp):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"thread_id": "support-4711", "run_id": "run-2026-12-01-a", "subjects": ["customer-42"]}
            ]
        }
    )

    thread_id: str = Field(
        min_length=1,
        max_length=256,
        description="The conversation the agent is in: names its session (1-256 characters).",
    )
    run_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=256,
        description="The interaction run the agent is in (its session is per run).",
    )
    # The interaction's subject inputs; whoever sent messages in the thread is added.
    subjects: list[str] = Field(
        default_factory=list,
        max_length=32,
        description=(
            "Whom or what the interaction is about (at most 32, each 1-200 characters); whoever sent "
            "messages in the thread is added."
        ),
    )
    # A (user, session) scope (the SDK's Session.resume): the user is the first subject, and their
    # working memory of the project and branch comes with the pack.
    user_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description=(
            "A (user, session) scope: the user is the tapestry's first subject, and their working memory "
            "comes with the pack."
        ),
    )
    project: Annotated[
        str,
        Field(
            description=(
                "With user_id: the project whose working memory to pack (at most 128 characters, '' for "
                "none)."
            )
        ),
    ] = working_memory.Name
    branch: Annotated[
        str,
        Field(
            description=(
                "With user_id: the branch whose working memory to pack (at most 128 characters, '' for none)."
            )
        ),
    ] = working_memory.Name


class PackAnswer(Answer):
    namespace: ActedIn
    session: SessionObject = Field(description="The agent's session (opened by this call if new).")
    tapestry: str | None = Field(
        description="The memory woven for the session, as text to put in the agent's context."
    )
    gifts: list[ThreadShape] = Field(description="Threads another agent of the run gave, offered now (once).")
    proposals: list[ProposedThread] = Field(
        description=(
            "Facts extraction proposed (a loom in Suggest mode), offered now (once): weave the wanted ones "
            "with memory.set."
        )
    )
    # Annotated: a default here would be bound to the name ``working_memory`` the annotation reads.
    working_memory: Annotated[
        working_memory.BlockAnswer | None,
        Field(
            description=(
                "The user's working memory of the project and branch; null when none (or no user_id)."
            )
        ),
    ]


def pack(caller: Caller, req: PackRequest) -> PackAnswer:
    """Get the memory to put in an agent's context for this conversation.

    Call it at the start of an agent's turn: it opens the agent's session (by thread, run and agent),
    weaves its tapestry from the loom's threads on the first call and answers the same tapestry after,
    and offers once what waits for it (gifts from other agents, proposals from extraction). With a
    `user_id` (and `project`, `branch`) it brings that user's working memory too.

    Errors: 404 for a loom not in this namespace; 422 for a subject over 200 characters."""
    if any(not 1 <= len(subject) <= 200 for subject in req.subjects):
        raise invalid("each subject is 1 to 200 characters", "subjects")
    now = utcnow()
    with db.session() as s:
        loom = the_loom(s, caller, req)
        session = sessions.open_session(s, loom, sessions.Where(req.thread_id, req.run_id, req.agent), now)
        if session.tapestry_woven_at is None:
            senders = sessions.senders(s, loom.namespace, req.thread_id)
            subjects = list(dict.fromkeys([*([req.user_id] if req.user_id else []), *senders, *req.subjects]))
            threads = s.exec(
                select(MemoryThread).where(col(MemoryThread.loom_id) == loom.id, *memory.live(now))
            ).all()
            woven = tapestry.choose(list(threads), subjects, get_settings().tapestry_max_chars)
            session.tapestry = tapestry.render(woven)
            session.tapestry_woven_at = now
            session.subjects = subjects
            sessions.record(s, session, {"tapestry_thread_ids": [t.id for t in woven]}, now)
        gifts = s.exec(
            select(MemoryThread).where(
                col(MemoryThread.id).in_(session.pending_gift_thread_ids), *memory.live(now)
            )
        ).all()
        proposals = [proposed(proposal) for proposal in session.pending_proposals]
        if session.pending_gift_thread_ids or proposals:
            offered = [thread.id for thread in gifts]
            session.known_thread_ids = [
                *session.known_thread_ids,
                *(i for i in offered if i not in session.known_thread_ids),
            ]
            session.pending_gift_thread_ids, session.pending_proposals = [], []
            session.date_updated = now
            s.add(session)
        s.flush()
        block = working_memory.block_of(s, loom.namespace, req.user_id or "", req.project, req.branch)
        return PackAnswer(
            namespace=loom.namespace,
            session=session_object(session),
            tapestry=session.tapestry,
            gifts=[shown(thread) for thread in gifts],
            proposals=proposals,
            working_memory=block,
        )
