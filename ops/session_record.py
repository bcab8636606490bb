"""memory.session_record: a client tells the agent's session which memory threads its agent
recalled, saw or held through a way that could not name the session itself (Loom's MCP tools: the
HTTP MCP server is never told the client's session id). The plugins' PostToolUse hooks call it
after a Loom MCP tool answered, so night weaving can tell an offered thread used from one ignored."""

from typing import Annotated
from uuid import UUID

from pydantic import Field

from models import db
from models.base import utcnow
from ops.caller import Caller
from ops.schemas import ActedIn, Answer
from ops.schemas.memory import LoomOp, SessionRun, the_loom
from pipelines import sessions

Ids = Annotated[list[UUID], Field(default_factory=list, max_length=100)]


class SessionRecordRequest(LoomOp):
    thread_id: str = Field(
        min_length=1, max_length=256, description="The conversation the agent is in: names its session."
    )
    run_id: SessionRun = None
    recalled: Ids = Field(
        description="Threads the agent got by searching or reflecting (at most 100): recalledThreadIds."
    )
    seen: Ids = Field(description="Threads the agent was shown, not used (at most 100): seenThreadIds.")
    held: Ids = Field(
        description="Threads the agent pinned (at most 100): heldThreadIds and wovenThreadIds, as memory.pin."
    )
    woven: Ids = Field(description="Threads the agent set (at most 100): wovenThreadIds, as memory.set.")


class SessionRecordAnswer(Answer):
    namespace: ActedIn
    session: UUID = Field(description="The session's id (a uuid), opened by this call if new.")
    recorded: int = Field(
        description="How many of the ids were recorded (live threads of the loom; any other is skipped)."
    )


def session_record(caller: Caller, req: SessionRecordRequest) -> SessionRecordAnswer:
    """Record in an agent's session the memory threads it recalled, saw or held elsewhere.

    For a client whose agent used Loom's memory through a way that did not name the session (MCP
    tools): the ids of live threads of the loom are recorded (recalled as recalledThreadIds, seen as
    seenThreadIds, held as heldThreadIds and wovenThreadIds, woven as wovenThreadIds) and known to
    the session; unknown ids are skipped. Nothing about the threads themselves changes.

    Errors: 404 for a loom not in this namespace; 422 for more than 100 ids in a list."""
    used = sessions.Used(req.recalled, req.seen, req.held, req.woven)
    with db.session() as s:
        loom = the_loom(s, caller, req)
        where = sessions.Where(req.thread_id, req.run_id, req.agent)
        session, recorded = sessions.record_used(s, loom, where, used, utcnow())
        return SessionRecordAnswer(namespace=loom.namespace, session=session.id, recorded=recorded)
