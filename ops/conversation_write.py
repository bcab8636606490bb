"""The conversation plane's write ops: validate, write the rows and their stage runs in one
transaction, then enqueue ids (the outbox rule). Never a model call here."""

from typing import Any, Literal, TypeVar

from pydantic import Field
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import Session, select

from models import db
from models.base import utcnow
from models.conversation import MSG_ID_MAX, Thread
from models.namespace import Namespace
from ops import append_metrics
from ops.caller import Caller
from ops.errors import not_found
from ops.schemas import Answer, Identifier, Metadata, Moment, OpRequest, SaidAt
from pipelines import appending
from workers import outbox
from workers.stages.embedding import EMBEDDING

Role = Literal["user", "assistant", "system", "tool"]


def recording(s: Session, namespace: str) -> bool:
    """The namespace's switch; a namespace with no row does not record (fails closed)."""
    row = s.get(Namespace, namespace)
    return bool(row and row.conversation_logging_enabled)


class SetLoggingRequest(OpRequest):
    enabled: bool


class SetLoggingAnswer(Answer):
    namespace: str
    conversation_logging_enabled: bool


def set_logging(caller: Caller, req: SetLoggingRequest) -> SetLoggingAnswer:
    namespace = caller.namespace(req.namespace)
    now = utcnow()
    with db.session() as s:
        s.exec(
            insert(Namespace)
            .values(name=namespace, conversation_logging_enabled=req.enabled, created_at=now, updated_at=now)
            .on_conflict_do_update(
                index_elements=["name"], set_={"conversation_logging_enabled": req.enabled, "updated_at": now}
            )
        )
    return SetLoggingAnswer(namespace=namespace, conversation_logging_enabled=req.enabled)


class AppendRequest(OpRequest):
    thread_id: str = Identifier
    role: Role
    content: str = Field(min_length=1, max_length=1_000_000)
    msg_id: str | None = Field(default=None, min_length=1, max_length=MSG_ID_MAX)
    reasoning: str | None = Field(default=None, max_length=1_000_000)
    user_id: str | None = Field(default=None, max_length=256)
    run_id: str | None = Field(default=None, max_length=256)
    metadata: Metadata = Field(default_factory=dict)
    tokens: int | None = Field(default=None, ge=0, le=2**31 - 1)
    ts: SaidAt | None = None  # when it was said (default: now)


class AppendAnswer(Answer):
    namespace: str
    thread_id: str
    msg_id: str
    stored: bool
    reason: Literal["logging_disabled", "duplicate", "deleted", "expired"] | None
    turn_id: int | None = None
    sensitivity: Literal["high", "none"] | None = None
    # shared: another agent's copy of this message, with the same text, holds the embedding row
    embedding: Literal["pending", "shared", "not_embedded"] | None = None


@append_metrics.observed
def append(caller: Caller, req: AppendRequest) -> AppendAnswer:
    turn = appending.NewTurn(
        namespace=caller.namespace(req.namespace),
        **req.model_dump(exclude={"namespace"}),
    )
    with db.autocommit() as conn:
        written = appending.write(conn, turn, EMBEDDING)
    if written.outcome != appending.STORED:
        return AppendAnswer(
            namespace=turn.namespace,
            thread_id=turn.thread_id,
            msg_id=written.msg_id,
            stored=False,
            reason=written.outcome,
        )
    if written.run_id is not None:
        outbox.wake(EMBEDDING.name, [written.run_id])
    return AppendAnswer(
        namespace=turn.namespace,
        thread_id=turn.thread_id,
        msg_id=written.msg_id,
        stored=True,
        reason=None,
        turn_id=written.turn_id,
        sensitivity=written.sensitivity,
        embedding=written.embedding,
    )


class ThreadAnswer(Answer):
    """A thread as create, update and get show it; only the first four fields while the namespace
    does not record (``stored`` false, reason ``logging_disabled``) and for a deleted thread
    (reason ``deleted``: a deleted thread id is not taken again)."""

    namespace: str
    thread_id: str
    stored: bool | None = None  # create and update
    reason: Literal["logging_disabled", "exists", "deleted"] | None = None
    agent: str | None = None
    title: str | None = None
    metadata: dict[str, Any] | None = None
    run_id: str | None = None
    turn_count: int | None = None
    created_at: Moment | None = None
    last_turn_at: Moment | None = None


class CreateRequest(OpRequest):
    thread_id: str = Identifier
    title: str | None = Field(default=None, max_length=500)
    metadata: Metadata = Field(default_factory=dict)
    run_id: str | None = Field(default=None, max_length=256)


def create(caller: Caller, req: CreateRequest) -> ThreadAnswer:
    namespace = caller.namespace(req.namespace)
    with db.session() as s:
        if not recording(s, namespace):
            return _not_recording(namespace, req.thread_id)
        created = s.scalar(
            insert(Thread)
            .values(
                namespace=namespace,
                thread_id=req.thread_id,
                agent=req.agent,
                title=req.title,
                meta=req.metadata,
                run_id=req.run_id,
                turn_count=0,
                created_at=utcnow(),
                last_turn_at=utcnow(),
            )
            .on_conflict_do_nothing(index_elements=["namespace", "thread_id"])
            .returning(Thread.id)
        )
        thread = s.exec(
            select(Thread).where(Thread.namespace == namespace, Thread.thread_id == req.thread_id)
        ).one()
        if thread.deleted_at is not None:
            return ThreadAnswer(namespace=namespace, thread_id=req.thread_id, stored=False, reason="deleted")
        return thread_answer(
            thread, stored=created is not None, reason=None if created is not None else "exists"
        )


class UpdateRequest(OpRequest):
    thread_id: str = Identifier
    title: str | None = Field(default=None, max_length=500)
    metadata: Metadata | None = None
    run_id: str | None = Field(default=None, max_length=256)


def update(caller: Caller, req: UpdateRequest) -> ThreadAnswer:
    namespace = caller.namespace(req.namespace)
    with db.session() as s:
        if not recording(s, namespace):
            return _not_recording(namespace, req.thread_id)
        thread = find_thread(s, namespace, req.thread_id, lock=True)
        for field in req.model_fields_set & {"title", "run_id"}:
            setattr(thread, field, getattr(req, field))
        if "metadata" in req.model_fields_set:
            thread.meta = req.metadata or {}
        s.add(thread)
        s.flush()
        return thread_answer(thread, stored=True, reason=None)


def _not_recording(namespace: str, thread_id: str) -> ThreadAnswer:
    """What create and update answer while the namespace does not record: nothing is kept."""
    return ThreadAnswer(namespace=namespace, thread_id=thread_id, stored=False, reason="logging_disabled")


def find_thread(s: Session, namespace: str, thread_id: str, lock: bool = False) -> Thread:
    """The live thread; 404 for one that does not exist or was deleted."""
    query = select(Thread).where(
        Thread.namespace == namespace, Thread.thread_id == thread_id, Thread.deleted_at.is_(None)
    )
    thread = s.exec(query.with_for_update() if lock else query).first()
    if thread is None:
        raise not_found(f"no thread {thread_id!r} in namespace {namespace!r}", "thread_id")
    return thread


Shown = TypeVar("Shown", bound=ThreadAnswer)


def thread_answer(thread: Thread, answer: type[Shown] = ThreadAnswer, **shown: Any) -> Shown:
    """The thread as ``answer`` (ThreadAnswer, or an answer extending it) shows it, with the fields
    ``shown`` gives; these may show the title and metadata otherwise (a listing screens them)."""
    shown.setdefault("title", thread.title)
    shown.setdefault("metadata", thread.meta)
    return answer(
        namespace=thread.namespace,
        thread_id=thread.thread_id,
        agent=thread.agent,
        run_id=thread.run_id,
        turn_count=thread.turn_count,
        created_at=thread.created_at,
        last_turn_at=thread.last_turn_at,
        **shown,
    )
