"""The conversation plane's thread ops: set_logging (the namespace's Record switch), create,
update, threads, delete and compact. Each validates, checks the caller, opens the transaction and
calls ``pipelines.recording``, ``threads`` and ``deleting`` or the compaction stage, whose rules and
statements these are; compact's model call is the worker's."""

from typing import Annotated

from pydantic import ConfigDict, Field

from models import db
from models.base import stored, utcnow
from models.stages import COMPACTION
from ops.caller import Caller
from ops.errors import OpError, invalid, no_thread
from ops.schemas import (
    ALL_AGENTS,
    ActedIn,
    Answer,
    ConversationThreadAnswer,
    Identifier,
    Metadata,
    Moment,
    OpRequest,
    WaitSeconds,
    named_agent,
    wait_for_run,
)
from ops.schemas.runs import RunAnswer, run_public
from ops.waiting import Waiting, started
from pipelines import deleting, listing, recording, threads
from providers import llm
from workers.stages import compaction


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
    with db.session() as s:
        recording.switch(s, namespace, req.enabled)
    return SetLoggingAnswer(namespace=namespace, conversation_logging_enabled=req.enabled)


def _not_recording(namespace: str, thread_id: str) -> ConversationThreadAnswer:
    """What create and update answer while the namespace does not record: nothing is kept."""
    return ConversationThreadAnswer(
        namespace=namespace, thread_id=thread_id, stored=False, reason="logging_disabled"
    )


class ThreadCreateRequest(OpRequest):
    model_config = ConfigDict(title="CreateRequest")

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


def create(caller: Caller, req: ThreadCreateRequest) -> ConversationThreadAnswer:
    """Open a conversation thread with a title and metadata before its first turn.

    Optional: appending to a new `thread_id` opens the thread too. A thread that exists is answered as
    it is (`stored: false`, `reason: "exists"`); a deleted thread's id is never taken again
    (`reason: "deleted"`); a namespace that does not record stores nothing (`logging_disabled`)."""
    namespace = caller.namespace(req.namespace)
    with db.session() as s:
        if not recording.recording(s, namespace):
            return _not_recording(namespace, req.thread_id)
        thread, created = threads.open_thread(
            s, namespace, req.thread_id, req.agent, req.title, req.metadata, req.run_id
        )
        if thread.deleted_at is not None:
            return ConversationThreadAnswer(
                namespace=namespace, thread_id=req.thread_id, stored=False, reason="deleted"
            )
        return ConversationThreadAnswer.of(thread, stored=created, reason=None if created else "exists")


class ThreadUpdateRequest(OpRequest):
    model_config = ConfigDict(title="UpdateRequest")

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


def update(caller: Caller, req: ThreadUpdateRequest) -> ConversationThreadAnswer:
    """Change a thread's title, metadata (replaced whole) or run id.

    Fields left out stay as they are. A namespace that does not record answers `stored: false`,
    `reason: "logging_disabled"`.

    Errors: 404 when the thread does not exist."""
    namespace = caller.namespace(req.namespace)
    with db.session() as s:
        if not recording.recording(s, namespace):
            return _not_recording(namespace, req.thread_id)
        thread = threads.find(s, namespace, req.thread_id, lock=True)
        if thread is None:
            raise no_thread(namespace, req.thread_id)
        changed = req.model_fields_set & {"title", "metadata", "run_id"}
        threads.change(s, thread, {field: getattr(req, field) for field in changed})
        return ConversationThreadAnswer.of(thread, stored=True, reason=None)


class ThreadsRequest(OpRequest):
    window_days: int | None = Field(
        default=None,
        ge=1,
        le=36_500,
        description=(
            "Only threads whose last turn is at most this many days old (1-36,500); every thread when "
            "omitted."
        ),
    )
    limit: int = Field(
        default=20, ge=1, le=200, description="How many threads a page holds (1-200, default 20)."
    )
    offset: int = Field(
        default=0, ge=0, le=100_000, description="How many threads to skip, for the next page (0-100,000)."
    )


class LastTurn(Answer):
    msg_id: str = Field(description="The newest live turn's message id.")
    role: str = Field(description="Who said the newest turn.")
    ts: Moment = Field(description="When the newest turn was said.")
    excerpt: str = Field(description="The start of the newest turn's text; blank when it reads as high.")


class ThreadsItem(ConversationThreadAnswer):
    model_config = ConfigDict(title="ThreadsItem")

    last_turn: LastTurn | None = Field(
        default=None, description="The thread's newest live turn, in brief; null for a thread with none."
    )


class ThreadsAnswer(Answer):
    namespace: ActedIn
    threads: list[ThreadsItem] = Field(description="The threads, the most recently active first.")
    offset: int = Field(description="The offset this page starts at.")
    limit: int = Field(description="The page size asked for.")


def list_threads(caller: Caller, req: ThreadsRequest) -> ThreadsAnswer:
    """List the namespace's conversation threads, the most recently active first.

    Each thread with its title, turn count, times and its newest turn in brief. Use it to show a user
    their conversations or to pick one to resume; `window_days` keeps the recent ones, `limit` and
    `offset` page. With an `agent`, only the threads that agent holds turns in (or opened); `"*"` for
    every agent's."""
    namespace = caller.namespace(req.namespace)
    agent = None if req.agent == ALL_AGENTS else req.agent
    with db.session() as s:
        rows = threads.listed(s, namespace, agent, req.window_days, req.offset, req.limit)
    items = [
        ThreadsItem.of(
            thread,
            title=listing.excerpt(thread.title) or None,
            metadata=listing.metadata(thread.meta),
            last_turn=None
            if last is None
            else LastTurn(
                msg_id=last.msg_id, role=last.role, ts=last.ts, excerpt=listing.excerpt(last.content)
            ),
        )
        for thread, last in rows
    ]
    return ThreadsAnswer(namespace=namespace, threads=items, offset=req.offset, limit=req.limit)


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


def compact(caller: Caller, req: CompactRequest) -> CompactAnswer | Waiting[CompactAnswer]:
    """Summarise a thread's older turns, keeping the newest verbatim.

    Requests a compaction run for the request's agent's transcript: the LLM writes a summary that takes
    the place of the older turns (saved messages stay verbatim), keeping `keep_recent` turns as they
    are. Answers the run at once, or once it is done with `wait`.

    Errors: 409 when the server has no LLM provider configured."""
    namespace = caller.namespace(req.namespace)
    if not llm.configured():
        raise OpError(409, f"conversation.compact needs an LLM provider: {llm.NO_PROVIDER}")
    with db.session() as s:
        thread = threads.find(s, namespace, req.thread_id)
        if thread is None:
            raise no_thread(namespace, req.thread_id)
        run = compaction.request(
            s, stored(thread.id), req.agent, req.keep_recent, req.min_to_compact, revive=True
        )
    return started(
        COMPACTION,
        run,
        req.wait,
        req.wait_seconds,
        lambda run: CompactAnswer(
            namespace=namespace, thread_id=req.thread_id, agent=req.agent, run=run_public(run)
        ),
    )


class ThreadDeleteRequest(OpRequest):
    model_config = ConfigDict(title="DeleteRequest")

    thread_id: Annotated[str, Field(description="The thread to delete.")] = Identifier
    confirm_thread_id: Annotated[
        str,
        Field(
            description=(
                "The same thread id again, as a guard against deleting by mistake; must equal thread_id."
            )
        ),
    ] = Identifier


class ThreadDeleteAnswer(Answer):
    model_config = ConfigDict(title="DeleteAnswer")

    namespace: ActedIn
    thread_id: str = Field(description="The thread deleted from.")
    turns_deleted: int = Field(description="How many turns were tombstoned.")
    thread_deleted: bool = Field(
        description=(
            "Whether the thread itself is gone (no live turn of any agent is left); its id is never reused."
        )
    )


def delete(caller: Caller, req: ThreadDeleteRequest) -> ThreadDeleteAnswer:
    """Delete a thread's turns (one agent's copies, or every agent's).

    Tombstones the turns and their embeddings; once no live turn is left the thread itself is deleted
    and its id is never taken again. `confirm_thread_id` must repeat `thread_id`, as a guard.

    Errors: 404 when there is no such thread; 422 when `confirm_thread_id` differs."""
    namespace = caller.namespace(req.namespace)
    if req.confirm_thread_id != req.thread_id:
        raise invalid("confirm_thread_id must equal thread_id", "confirm_thread_id")
    with db.session() as s:
        deleted = deleting.delete(s, namespace, req.thread_id, named_agent(req), utcnow())
    if deleted is None:
        raise no_thread(namespace, req.thread_id)
    return ThreadDeleteAnswer(
        namespace=namespace,
        thread_id=req.thread_id,
        turns_deleted=deleted.turns,
        thread_deleted=deleted.thread_deleted,
    )
