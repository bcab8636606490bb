"""looms.list, looms.create, looms.update, looms.sessions (also ``GET /looms/by-id/{id}/sessions``)
and context.pack.

A LoomSession is served as the seed's object: every field by its exact name, camelCase, arrays
``[]`` when empty and scalars ``null``, uuids, UTC datetimes (``session_object``)."""

from datetime import datetime
from typing import Any, Literal
from uuid import UUID, uuid4

from pydantic import Field
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
from ops.memory import LoomOp, ThreadShape, shown, the_loom
from ops.schemas import Answer, Moment, OpRequest
from pipelines import memory, sessions, tapestry


class ProposedThread(Answer):
    content: str
    kind: str
    weight: float
    subjects: list[str]
    tags: list[str]
    cues: list[str]
    until: Moment | None
    basis: str


class SessionObject(Answer):
    loomId: UUID  # noqa: N815 (the seed's names, throughout)
    interactionProcessId: UUID  # noqa: N815
    agentName: str  # noqa: N815
    agentId: UUID | None  # noqa: N815
    tapestry: str | None
    tapestryWovenAt: Moment | None  # noqa: N815
    subjects: list[str]
    tapestryThreadIds: list[UUID]  # noqa: N815
    suggestedThreadIds: list[UUID]  # noqa: N815
    heldBackThreadIds: list[UUID]  # noqa: N815
    cuedThreadIds: list[UUID]  # noqa: N815
    heldThreadIds: list[UUID]  # noqa: N815
    pendingGiftThreadIds: list[UUID]  # noqa: N815
    recalledThreadIds: list[UUID]  # noqa: N815
    wovenThreadIds: list[UUID]  # noqa: N815
    seenThreadIds: list[UUID]  # noqa: N815
    pendingProposals: list[ProposedThread]  # noqa: N815
    lastTurnAt: Moment | None  # noqa: N815
    lastSequence: int  # noqa: N815
    awaitingNight: bool  # noqa: N815
    consolidatedUpToSequence: int  # noqa: N815
    judgedThreadIds: list[UUID]  # noqa: N815
    consolidatedByNightWeavingId: UUID | None  # noqa: N815
    knownThreadIds: list[UUID]  # noqa: N815
    tenantId: UUID  # noqa: N815
    id: UUID
    dateCreated: Moment  # noqa: N815
    dateUpdated: Moment  # noqa: N815


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
    id: UUID
    name: str
    isDefault: bool  # noqa: N815
    weavingMode: Literal[WEAVING_MODES]  # type: ignore[valid-type]  # noqa: N815
    dateCreated: Moment  # noqa: N815


def loom_shape(loom: Loom) -> LoomShape:
    return LoomShape(
        id=loom.id,
        name=loom.name,
        isDefault=loom.is_default,
        weavingMode=loom.weaving_mode,
        dateCreated=loom.created_at,
    )


class ListAnswer(Answer):
    namespace: str
    looms: list[LoomShape]


def list_looms(caller: Caller, req: ListRequest) -> ListAnswer:
    namespace = caller.namespace(req.namespace)
    with db.session() as s:
        memory.default_loom(s, namespace)
        looms = s.exec(
            select(Loom).where(Loom.namespace == namespace).order_by(Loom.created_at, Loom.name)
        ).all()
        return ListAnswer(namespace=namespace, looms=[loom_shape(loom) for loom in looms])


class CreateRequest(OpRequest):
    name: str = Field(min_length=1, max_length=128)
    weaving_mode: Literal[WEAVING_MODES] = AUTO  # type: ignore[valid-type]


class LoomAnswer(Answer):
    namespace: str
    created: bool  # false: the namespace has a loom of that name, answered as it is
    loom: LoomShape


def create(caller: Caller, req: CreateRequest) -> LoomAnswer:
    """Another loom of the namespace (its default one is made on first use)."""
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
            .returning(Loom.id)
        ).first()
        loom = s.exec(select(Loom).where(Loom.namespace == namespace, Loom.name == req.name)).one()
        return LoomAnswer(namespace=namespace, created=made is not None, loom=loom_shape(loom))


class UpdateRequest(LoomOp):
    weaving_mode: Literal[WEAVING_MODES]  # type: ignore[valid-type]


def update(caller: Caller, req: UpdateRequest) -> LoomAnswer:
    """Set how the loom takes what extraction finds."""
    with db.session() as s:
        loom = the_loom(s, caller, req)
        loom.weaving_mode = req.weaving_mode
        s.add(loom)
        return LoomAnswer(namespace=loom.namespace, created=False, loom=loom_shape(loom))


class SessionsRequest(LoomOp):
    agent_name: str | None = Field(default=None, min_length=1, max_length=128)
    awaiting_night: bool | None = None
    limit: int = Field(default=50, ge=1, le=200)
    cursor: str | None = Field(default=None, max_length=200)


class SessionsAnswer(Answer):
    namespace: str
    loomId: UUID  # noqa: N815
    sessions: list[SessionObject]
    nextCursor: str | None  # noqa: N815


# A page ends at a session: its (date_created, id).
SESSIONS_CURSOR = cursors.Kind("looms.sessions", (datetime, UUID))


def list_sessions(caller: Caller, req: SessionsRequest) -> SessionsAnswer:
    """The loom's sessions, newest first, a page at a time."""
    with db.session() as s:
        loom = the_loom(s, caller, req)
        query = select(LoomSession).where(LoomSession.loom_id == loom.id)
        if req.agent_name is not None:
            query = query.where(LoomSession.agent_name == req.agent_name)
        if req.awaiting_night is not None:
            query = query.where(LoomSession.awaiting_night == req.awaiting_night)
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


class PackRequest(LoomOp):
    thread_id: str = Field(min_length=1, max_length=256)  # the conversation the agent is in
    run_id: str | None = Field(default=None, min_length=1, max_length=256)
    # The interaction's subject inputs; whoever sent messages in the thread is added.
    subjects: list[str] = Field(default_factory=list, max_length=32)
    # A (user, session) scope (the SDK's Session.resume): the user is the first subject, and their
    # working memory of the project and branch comes with the pack.
    user_id: str | None = Field(default=None, min_length=1, max_length=200)
    project: str = working_memory.Name
    branch: str = working_memory.Name


class PackAnswer(Answer):
    namespace: str
    session: SessionObject
    tapestry: str | None
    gifts: list[ThreadShape]  # given by another agent of the run, offered now
    proposals: list[ProposedThread]
    working_memory: working_memory.BlockAnswer | None  # the scope's "where was I" block, if any


def pack(caller: Caller, req: PackRequest) -> PackAnswer:
    """The agent's context for this turn: its tapestry (woven now when this is its first turn in
    the session, then fixed), and what waits to be offered (gifts, proposals), offered once."""
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
                select(MemoryThread).where(MemoryThread.loom_id == loom.id, *memory.live(now))
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
