"""conversation.compact and conversation.delete. Compact is a thin endpoint (validate, write the
stage run, enqueue it; the worker asks the model); delete tombstones in one transaction."""

from pydantic import Field
from sqlmodel import col, func, select, update

from models import db
from models.base import utcnow
from models.conversation import Thread, Turn
from ops.caller import Caller
from ops.conversation_read import named_agent
from ops.conversation_write import find_thread
from ops.errors import OpError, invalid, not_found
from ops.runs import RunAnswer, run_public, started
from ops.schemas import Answer, Identifier, OpRequest
from ops.waiting import Waiting
from pipelines import contexts, retire
from providers import llm
from workers.stages import compaction


class CompactRequest(OpRequest):
    thread_id: str = Identifier
    keep_recent: int = Field(default=10, ge=0, le=10_000)
    min_to_compact: int = Field(default=4, ge=1, le=10_000)
    wait: bool = False  # answer once the run is done, or after wait_seconds
    wait_seconds: float = Field(default=30, gt=0, le=120)


class CompactAnswer(Answer):
    namespace: str
    thread_id: str
    agent: str
    run: RunAnswer


def compact(caller: Caller, req: CompactRequest) -> CompactAnswer | Waiting:
    namespace = caller.namespace(req.namespace)
    if not llm.configured():
        raise OpError(409, f"conversation.compact needs an LLM provider: {llm.NO_PROVIDER}")
    with db.session() as s:
        thread = find_thread(s, namespace, req.thread_id)
        run = compaction.request(s, thread.id, req.agent, req.keep_recent, req.min_to_compact, revive=True)
    return started(
        compaction.STAGE,
        run,
        req.wait,
        req.wait_seconds,
        lambda run: CompactAnswer(
            namespace=namespace, thread_id=req.thread_id, agent=req.agent, run=run_public(run)
        ),
    )


class DeleteRequest(OpRequest):
    thread_id: str = Identifier
    confirm_thread_id: str = Identifier


class DeleteAnswer(Answer):
    namespace: str
    thread_id: str
    turns_deleted: int
    thread_deleted: bool  # false while another agent's copies stay live


def delete(caller: Caller, req: DeleteRequest) -> DeleteAnswer:
    """Tombstone the thread's turns (the named agent's copies, or every agent's), their
    embedding rows (a row another agent's live copy shares passes to it) and, once no live turn
    is left, the thread row; the contexts of the turns left are rebuilt."""
    namespace = caller.namespace(req.namespace)
    if req.confirm_thread_id != req.thread_id:
        raise invalid("confirm_thread_id must equal thread_id", "confirm_thread_id")
    agent = named_agent(req)
    now = utcnow()
    with db.session() as s:
        # The thread row, locked (appends and a concurrent delete wait on it), deleted or not.
        thread = s.exec(
            select(Thread)
            .where(Thread.namespace == namespace, Thread.thread_id == req.thread_id)
            .with_for_update()
        ).first()
        if thread is None:
            raise not_found(f"no thread {req.thread_id!r} in namespace {namespace!r}", "thread_id")
        if thread.deleted_at is not None:  # deleted before: a retried delete is answered as done
            return DeleteAnswer(
                namespace=namespace, thread_id=req.thread_id, turns_deleted=0, thread_deleted=True
            )
        live = [Turn.namespace == namespace, Turn.thread_id == req.thread_id, col(Turn.deleted_at).is_(None)]
        doomed = live + ([Turn.agent == agent] if agent else [])
        turns = s.exec(update(Turn).where(*doomed).values(deleted_at=now)).rowcount
        retire.settle_rows(s, namespace, req.thread_id, now)
        contexts.rebuild(s, [(namespace, req.thread_id)])  # another agent's turns may hold their words
        remaining = s.exec(select(Turn.id).where(*live).limit(1)).first()
        s.exec(
            update(Thread)
            .where(Thread.id == thread.id)
            .values(
                deleted_at=now if remaining is None else None,
                turn_count=func.greatest(Thread.turn_count - turns, 0),
            )
        )
    return DeleteAnswer(
        namespace=namespace, thread_id=req.thread_id, turns_deleted=turns, thread_deleted=remaining is None
    )
