"""conversation.compact and conversation.delete. Compact is a thin endpoint (validate, write the
stage run, enqueue it; the worker asks the model); delete tombstones in one transaction."""

from typing import Annotated

from pydantic import Field
from sqlmodel import col, func, select, update

from models import db
from models.base import utcnow
from models.conversation import Thread, Turn
from models.stages import COMPACTION
from ops.caller import Caller
from ops.conversation_read import named_agent
from ops.conversation_write import find_thread
from ops.errors import OpError, invalid, not_found
from ops.runs import RunAnswer, run_public, started
from ops.schemas import ActedIn, Answer, Identifier, OpRequest, WaitSeconds, wait_for_run
from ops.waiting import Waiting
from pipelines import contexts, retire
from providers import llm
from workers.stages import compaction


class CompactRequest(OpRequest):
    thread_id: Annotated[
        str, Field(description="The thread whose transcript (of the request's agent) to compact.")
    ] = Identifier
    keep_recent: int = Field(
        default=10,
        ge=0,
        le=10_000,
        description="How many of the newest turns stay verbatim (0-10,000, default 10).",
    )
    min_to_compact: int = Field(
        default=4,
        ge=1,
        le=10_000,
        description="Compact only when at least this many turns would be summarised (1-10,000, default 4).",
    )
    wait: bool = wait_for_run("compaction")
    wait_seconds: WaitSeconds = 30


class CompactAnswer(Answer):
    namespace: ActedIn
    thread_id: str = Field(description="The thread being compacted.")
    agent: str = Field(description="The agent whose transcript is compacted.")
    run: RunAnswer = Field(
        description="The compaction run (poll it with runs.get); its result counts the turns summarised."
    )


def compact(caller: Caller, req: CompactRequest) -> CompactAnswer | Waiting:
    """Summarise a thread's older turns, keeping the newest verbatim.

    Requests a compaction run for the request's agent's transcript: the LLM writes a summary that takes
    the place of the older turns (saved messages stay verbatim), keeping `keep_recent` turns as they
    are. Answers the run at once, or once it is done with `wait`.

    Errors: 409 when the server has no LLM provider configured."""
    namespace = caller.namespace(req.namespace)
    if not llm.configured():
        raise OpError(409, f"conversation.compact needs an LLM provider: {llm.NO_PROVIDER}")
    with db.session() as s:
        thread = find_thread(s, namespace, req.thread_id)
        run = compaction.request(s, thread.id, req.agent, req.keep_recent, req.min_to_compact, revive=True)
    return started(
        COMPACTION,
        run,
        req.wait,
        req.wait_seconds,
        lambda run: CompactAnswer(
            namespace=namespace, thread_id=req.thread_id, agent=req.agent, run=run_public(run)
        ),
    )


class DeleteRequest(OpRequest):
    thread_id: Annotated[str, Field(description="The thread to delete.")] = Identifier
    confirm_thread_id: Annotated[
        str,
        Field(
            description=(
                "The same thread id again, as a guard against deleting by mistake; must equal thread_id."
            )
        ),
    ] = Identifier


class DeleteAnswer(Answer):
    namespace: ActedIn
    thread_id: str = Field(description="The thread deleted from.")
    turns_deleted: int = Field(description="How many turns were tombstoned.")
    thread_deleted: bool = Field(
        description=(
            "Whether the thread itself is gone (no live turn of any agent is left); its id is never reused."
        )
    )


def delete(caller: Caller, req: DeleteRequest) -> DeleteAnswer:
    """Delete a thread's turns (one agent's copies, or every agent's).

    Tombstones the turns and their embeddings; once no live turn is left the thread itself is deleted
    and its id is never taken again. `confirm_thread_id` must repeat `thread_id`, as a guard.

    Errors: 404 when there is no such thread; 422 when `confirm_thread_id` differs."""
    namespace = caller.namespace(req.namespace)
    if req.confirm_thread_id != req.thread_id:
        raise invalid("confirm_thread_id must equal thread_id", "confirm_thread_id")
    agent = named_agent(req)
    now = utcnow()
    with db.session() as s:
        # The thread row, locked (appends and a concurrent delete wait on it), deleted or not.
        thread = s.exec(
            select(Thread)
            .where(col(Thread.namespace) == namespace, col(Thread.thread_id) == req.thread_id)
            .with_for_update()
        ).first()
        if thread is None:
            raise not_found(f"no thread {req.thread_id!r} in namespace {namespace!r}", "thread_id")
        if thread.deleted_at is not None:  # deleted before: a retried delete is answered as done
            return DeleteAnswer(
                namespace=namespace, thread_id=req.thread_id, turns_deleted=0, thread_deleted=True
            )
        live = [
            col(Turn.namespace) == namespace,
            col(Turn.thread_id) == req.thread_id,
            col(Turn.deleted_at).is_(None),
        ]
        doomed = live + ([col(Turn.agent) == agent] if agent else [])
        turns = s.exec(update(Turn).where(*doomed).values(deleted_at=now)).rowcount
        retire.settle_rows(s, namespace, req.thread_id, now)
        contexts.rebuild(s, [(namespace, req.thread_id)])  # another agent's turns may hold their words
        remaining = s.exec(select(col(Turn.id)).where(*live).limit(1)).first()
        s.exec(
            update(Thread)
            .where(col(Thread.id) == thread.id)
            .values(
                deleted_at=now if remaining is None else None,
                turn_count=func.greatest(Thread.turn_count - turns, 0),
            )
        )
    return DeleteAnswer(
        namespace=namespace, thread_id=req.thread_id, turns_deleted=turns, thread_deleted=remaining is None
    )
