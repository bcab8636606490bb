"""looms.list, looms.create, looms.update and looms.sessions (also ``GET
/looms/by-id/{id}/sessions``); context.pack is ``ops.context_pack``.

A LoomSession is served as the seed's object: every field by its exact name, camelCase, arrays
``[]`` when empty and scalars ``null``, uuids, UTC datetimes (``ops.schemas.memory.session_object``)."""

from datetime import datetime
from uuid import UUID

from pydantic import ConfigDict, Field

from models import db
from models.base import utcnow
from models.memory import AUTO, Loom, WeavingMode
from ops import cursors
from ops.caller import Caller
from ops.schemas import ActedIn, Answer, Moment, OpRequest
from ops.schemas.memory import LoomOp, SessionObject, session_object, the_loom
from pipelines import memory, night_weaving, sessions


class LoomListRequest(OpRequest):
    model_config = ConfigDict(title="ListRequest")


class LoomShape(Answer):
    id: UUID = Field(description="The loom's id (a uuid): what the memory ops take as loom_id.")
    name: str = Field(description="The loom's name, unique in its namespace.")
    isDefault: bool = Field(
        description="Whether it is the namespace's default loom (the one used when an op names none)."
    )  # noqa: N815
    weavingMode: WeavingMode = Field(
        description=(
            "Auto: extraction writes memory threads; Suggest: it proposes them to the session instead."
        )
    )  # noqa: N815
    dateCreated: Moment = Field(description="When the loom was made.")  # noqa: N815


def loom_shape(loom: Loom) -> LoomShape:
    return LoomShape(
        id=loom.id,
        name=loom.name,
        isDefault=loom.is_default,
        weavingMode=loom.weaving_mode,
        dateCreated=loom.created_at,
    )


class LoomListAnswer(Answer):
    model_config = ConfigDict(title="ListAnswer")

    namespace: ActedIn
    looms: list[LoomShape] = Field(description="The namespace's looms (its default one made on first use).")


def list_looms(caller: Caller, req: LoomListRequest) -> LoomListAnswer:
    """List the namespace's looms (memory spaces).

    Each loom's id, name, whether it is the default and its weaving mode. The default loom is made on
    first use."""
    namespace = caller.namespace(req.namespace)
    with db.session() as s:
        looms = memory.looms_of(s, namespace)
        return LoomListAnswer(namespace=namespace, looms=[loom_shape(loom) for loom in looms])


class LoomCreateRequest(OpRequest):
    model_config = ConfigDict(title="CreateRequest")

    name: str = Field(
        min_length=1,
        max_length=128,
        description=(
            "The new loom's name (1-128 characters); an existing name answers that loom with created false."
        ),
    )
    weaving_mode: WeavingMode = Field(
        default=AUTO,
        description=(
            "Auto (default): extraction writes memory threads; Suggest: extraction proposes them to the "
            "session."
        ),
    )


class LoomAnswer(Answer):
    namespace: ActedIn
    created: bool = Field(
        description="Whether a loom was made (false: the namespace had one of that name, answered as it is)."
    )
    loom: LoomShape = Field(description="The loom.")


def create(caller: Caller, req: LoomCreateRequest) -> LoomAnswer:
    """Make another loom (memory space) in the namespace.

    A loom of the same name is answered as it is, with `created: false`. `weaving_mode` says whether
    extraction writes memory threads (`Auto`) or proposes them to the session (`Suggest`)."""
    namespace = caller.namespace(req.namespace)
    with db.session() as s:
        loom, created = memory.create_loom(s, namespace, req.name, req.weaving_mode, utcnow())
        return LoomAnswer(namespace=namespace, created=created, loom=loom_shape(loom))


class LoomUpdateRequest(LoomOp):
    model_config = ConfigDict(title="UpdateRequest")

    weaving_mode: WeavingMode = Field(description="The loom's new weaving mode: Auto or Suggest.")


def update(caller: Caller, req: LoomUpdateRequest) -> LoomAnswer:
    """Change how a loom takes what extraction finds (its weaving mode).

    `Auto`: extraction writes memory threads; `Suggest`: it proposes them to the session, whose next
    context.pack offers them. The default loom's when `loom_id` is omitted.

    Errors: 404 for a loom not in this namespace."""
    with db.session() as s:
        loom = the_loom(s, caller, req)
        memory.set_weaving_mode(s, loom, req.weaving_mode)
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
        scope = (loom.namespace, loom.id, req.agent_name, req.awaiting_night)
        before = None if req.cursor is None else cursors.decode(SESSIONS_CURSOR, scope, req.cursor)
        rows = sessions.page(s, loom.id, req.agent_name, req.awaiting_night, before, req.limit + 1)
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
