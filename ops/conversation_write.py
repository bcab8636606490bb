"""The conversation plane's write ops: validate, write the rows and their stage runs in one
transaction, then enqueue ids (the outbox rule). Never a model call here."""

from typing import Annotated, Any, Literal, TypeVar

from pydantic import ConfigDict, Field
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import Session, col, select

from models import db
from models.base import utcnow
from models.conversation import MSG_ID_MAX, Thread
from models.namespace import Namespace
from models.stages import EMBEDDING
from ops import append_metrics
from ops.caller import Caller
from ops.errors import not_found
from ops.schemas import ActedIn, Answer, Identifier, Metadata, Moment, OpRequest, SaidAt
from pipelines import appending
from workers import outbox

Role = Literal["user", "assistant", "system", "tool"]


def recording(s: Session, namespace: str) -> bool:
    """The namespace's switch; a namespace with no row does not record (fails closed)."""
    row = s.get(Namespace, namespace)
    return bool(row and row.conversation_logging_enabled)


class SetLoggingRequest(OpRequest):
    enabled: bool = Field(
        description=(
            "true: the namespace records its conversations from now on; false: appends, creates and ingests "
            "are answered but nothing is kept."
        )
    )


class SetLoggingAnswer(Answer):
    namespace: ActedIn
    conversation_logging_enabled: bool = Field(description="The namespace's Record switch as it now is.")


def set_logging(caller: Caller, req: SetLoggingRequest) -> SetLoggingAnswer:
    """Switch a namespace's recording of conversations on or off.

    The Record switch: while it is off, appends, creates, updates and ingests are answered
    (`stored: false`, `reason: "logging_disabled"`) but nothing is kept. A namespace starts off. Use it
    once when setting a namespace up, or to stop keeping transcripts. Saved messages ignore it.

    Errors: 403 for a token below admin or not covering the namespace."""
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
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "thread_id": "support-4711",
                    "role": "user",
                    "content": "The invoice export fails with a timeout since Monday.",
                    "msg_id": "m-1",
                    "user_id": "customer-42",
                    "run_id": "run-2026-12-01-a",
                    "metadata": {"channel": "chat"},
                    "ts": "2026-12-01T09:30:00+00:00",
                }
            ]
        }
    )

    thread_id: Annotated[
        str,
        Field(
            description=(
                "The conversation thread the turn belongs to (1-256 characters); a new id starts a thread."
            )
        ),
    ] = Identifier
    role: Role = Field(description="Who said it: user, assistant, system or tool.")
    content: str = Field(
        min_length=1,
        max_length=1_000_000,
        description=(
            "The turn's text (1-1,000,000 characters). Screened for secrets and embedded (user and assistant "
            "turns)."
        ),
    )
    msg_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=MSG_ID_MAX,
        description=(
            "The client's id for the message, unique in the thread (at most 128 characters); the same id "
            "again is answered as a duplicate. Generated when omitted."
        ),
    )
    reasoning: str | None = Field(
        default=None,
        max_length=1_000_000,
        description=(
            "The model's reasoning behind an assistant turn, kept beside its content (at most 1,000,000 "
            "characters)."
        ),
    )
    user_id: str | None = Field(
        default=None,
        max_length=256,
        description=(
            "The end user who said it or was answered (at most 256 characters): what erasure by user and "
            "saved messages key on."
        ),
    )
    run_id: str | None = Field(
        default=None,
        max_length=256,
        description=(
            "The interaction run the turn is part of (at most 256 characters): names the agent's LoomSession "
            "and lets conversation.list and search filter by run."
        ),
    )
    metadata: Metadata = Field(
        default_factory=dict,
        description="Free-form JSON kept with the turn (at most 64 KiB as compact JSON, 16 levels deep).",
    )
    tokens: int | None = Field(
        default=None,
        ge=0,
        le=2**31 - 1,
        description="The turn's token count, as the client counted it (0 to 2^31-1).",
    )
    ts: SaidAt | None = Field(
        default=None,
        description=(
            "When it was said, with its UTC offset (default: now); not more than 5 s in the future, not "
            "before 1970. A turn older than the retention TTL is not stored (reason expired)."
        ),
    )


class AppendAnswer(Answer):
    namespace: ActedIn
    thread_id: str = Field(description="The thread the turn was appended to.")
    msg_id: str = Field(description="The message's id: the one sent, or the one Loom generated.")
    stored: bool = Field(description="Whether the turn was written; false with a reason otherwise.")
    reason: Literal["logging_disabled", "duplicate", "deleted", "expired"] | None = Field(
        description=(
            "Why nothing was stored: logging_disabled (the namespace does not record), duplicate (the msg_id "
            "is taken), deleted (the thread was deleted) or expired (said before the retention cutoff)."
        )
    )
    turn_id: int | None = Field(default=None, description="The stored turn's database id.")
    sensitivity: Literal["high", "none"] | None = Field(
        default=None,
        description=(
            "The screening verdict: high (a secret or personal number was found: the turn is kept but never "
            "embedded nor sent to a model) or none."
        ),
    )
    # shared: another agent's copy of this message, with the same text, holds the embedding row
    embedding: Literal["pending", "shared", "not_embedded"] | None = Field(
        default=None,
        description=(
            "pending: an embedding run is queued; shared: another agent's copy with the same text holds the "
            "embedding; not_embedded: the turn is never embedded (system/tool turn, or high sensitivity)."
        ),
    )


@append_metrics.observed
def append(caller: Caller, req: AppendRequest) -> AppendAnswer:
    """Append one turn (a message) to a conversation thread.

    The main write: every user, assistant, system or tool message an agent wants remembered. The turn
    is screened for secrets and personal numbers, stored, and (user and assistant turns) embedded by
    the worker, so conversation.search finds it by meaning within seconds and by its words at once. A
    new `thread_id` starts a thread. The same `msg_id` again is answered `stored: false`,
    `reason: "duplicate"` (retries are safe); so is a deleted thread (`deleted`), a namespace that does
    not record (`logging_disabled`) and a turn said before the retention cutoff (`expired`).

    Errors: 422 for a field out of its bounds (content up to 1,000,000 characters, `ts` in the future
    or before 1970, metadata over 64 KiB)."""
    turn = appending.NewTurn(
        namespace=caller.namespace(req.namespace),
        **req.model_dump(exclude={"namespace"}),
    )
    with db.autocommit() as conn:
        written = appending.write(conn, turn)
    if written.outcome != appending.STORED:
        return AppendAnswer(
            namespace=turn.namespace,
            thread_id=turn.thread_id,
            msg_id=written.msg_id,
            stored=False,
            reason=written.outcome,
        )
    if written.embedding_run_id is not None:
        outbox.wake(EMBEDDING, [written.embedding_run_id])
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

    namespace: ActedIn
    thread_id: str = Field(description="The conversation thread's id.")
    stored: bool | None = Field(default=None, description="create and update: whether anything was written.")
    reason: Literal["logging_disabled", "exists", "deleted"] | None = Field(
        default=None,
        description=(
            "Why not: logging_disabled (the namespace does not record), exists (create of a thread that "
            "exists: it is answered as it is) or deleted (a deleted thread's id is never taken again)."
        ),
    )
    agent: str | None = Field(default=None, description="The agent that opened the thread.")
    title: str | None = Field(
        default=None,
        description="The thread's title (set by create or update, or generated by the titles stage).",
    )
    metadata: dict[str, Any] | None = Field(default=None, description="The thread's free-form JSON metadata.")
    run_id: str | None = Field(
        default=None, description="The run id the thread was opened or last updated with."
    )
    turn_count: int | None = Field(
        default=None, description="How many turns the thread has been given (every agent's)."
    )
    created_at: Moment | None = Field(default=None, description="When the thread was created.")
    last_turn_at: Moment | None = Field(
        default=None, description="When its newest turn was said; null for a thread with no turn yet."
    )


class CreateRequest(OpRequest):
    thread_id: Annotated[str, Field(description="The id of the thread to open (1-256 characters).")] = (
        Identifier
    )
    title: str | None = Field(
        default=None, max_length=500, description="A title for the thread (at most 500 characters)."
    )
    metadata: Metadata = Field(
        default_factory=dict,
        description="Free-form JSON kept with the thread (at most 64 KiB as compact JSON).",
    )
    run_id: str | None = Field(
        default=None,
        max_length=256,
        description="The interaction run that opens the thread (at most 256 characters).",
    )


def create(caller: Caller, req: CreateRequest) -> ThreadAnswer:
    """Open a conversation thread with a title and metadata before its first turn.

    Optional: appending to a new `thread_id` opens the thread too. A thread that exists is answered as
    it is (`stored: false`, `reason: "exists"`); a deleted thread's id is never taken again
    (`reason: "deleted"`); a namespace that does not record stores nothing (`logging_disabled`)."""
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
            .returning(col(Thread.id))
        )
        thread = s.exec(
            select(Thread).where(col(Thread.namespace) == namespace, col(Thread.thread_id) == req.thread_id)
        ).one()
        if thread.deleted_at is not None:
            return ThreadAnswer(namespace=namespace, thread_id=req.thread_id, stored=False, reason="deleted")
        return thread_answer(
            thread, stored=created is not None, reason=None if created is not None else "exists"
        )


class UpdateRequest(OpRequest):
    thread_id: Annotated[
        str, Field(description="The id of the thread to change; it must exist (404 otherwise).")
    ] = Identifier
    title: str | None = Field(
        default=None,
        max_length=500,
        description="The new title (at most 500 characters); unchanged when omitted.",
    )
    metadata: Metadata | None = Field(
        default=None, description="New metadata, which replaces the old whole; unchanged when omitted."
    )
    run_id: str | None = Field(
        default=None,
        max_length=256,
        description="The run id to record on the thread; unchanged when omitted.",
    )


def update(caller: Caller, req: UpdateRequest) -> ThreadAnswer:
    """Change a thread's title, metadata (replaced whole) or run id.

    Fields left out stay as they are. A namespace that does not record answers `stored: false`,
    `reason: "logging_disabled"`.

    Errors: 404 when the thread does not exist."""
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
        col(Thread.namespace) == namespace,
        col(Thread.thread_id) == thread_id,
        col(Thread.deleted_at).is_(None),
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
