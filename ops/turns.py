"""The conversation plane's turn ops: append one turn (the main write: its row and its embedding
run in one statement, then the worker is woken), and read a thread's turns a page at a time
(conversation.get with its messages, conversation.list). Never a model call here."""

from datetime import datetime
from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from models import db
from models.conversation import MSG_ID_MAX
from models.stages import EMBEDDING
from ops import append_metrics, cursors
from ops.caller import Caller
from ops.errors import no_thread
from ops.schemas import (
    ActedIn,
    Answer,
    ConversationThreadAnswer,
    Identifier,
    Metadata,
    NextCursor,
    OpRequest,
    PageCursor,
    SaidAt,
    TurnAnswer,
    named_agent,
)
from pipelines import appending, threads
from workers import outbox

Role = Literal["user", "assistant", "system", "tool"]


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
    name: str | None = Field(
        default=None,
        min_length=1,
        max_length=128,
        description=(
            "Who spoke, where several people share the role (two friends chatting, a support team): their "
            "name, at most 128 characters. A hybrid search that names exactly one speaker lifts their turns."
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


# A page ends at a turn: its (ts, id).
GET_CURSOR = cursors.Kind("conversation.get", (datetime, int))
LIST_CURSOR = cursors.Kind("conversation.list", (datetime, int))


def _page(
    kind: cursors.Kind,
    namespace: str,
    thread_id: str,
    order: str,
    limit: int,
    cursor: str | None,
    agent: str | None,
    run_id: str | None = None,
) -> tuple[list[TurnAnswer], str | None]:
    """A page of the thread's live turns and the cursor that continues the walk (None at its end)."""
    scope = (namespace, thread_id, agent, order, run_id)  # what the rows are chosen by
    after = cursors.decode(kind, scope, cursor) if cursor else None
    with db.session() as s:
        rows = threads.turns(s, namespace, thread_id, order, after, limit + 1, agent, run_id)
    page = rows[:limit]
    return (
        [TurnAnswer.of(turn) for turn in page],
        cursors.encode(kind, scope, (page[-1].ts, page[-1].id)) if len(rows) > limit else None,
    )


class ThreadGetRequest(OpRequest):
    model_config = ConfigDict(title="GetRequest")

    thread_id: Annotated[str, Field(description="The thread to read.")] = Identifier
    include_messages: bool = Field(
        default=False,
        description=(
            "true: the answer carries a page of the thread's turns too (default false: the thread alone)."
        ),
    )
    order: Literal["asc", "desc"] = Field(
        default="asc", description="The turns' order: asc (oldest first, default) or desc (newest first)."
    )
    limit: int = Field(
        default=100, ge=1, le=500, description="How many turns a page holds (1-500, default 100)."
    )
    cursor: str | None = Field(
        default=None,
        max_length=200,
        description="The next_cursor of the previous page, to read on; omitted for the first page.",
    )


class GetAnswer(ConversationThreadAnswer):
    model_config = ConfigDict(title="GetAnswer")

    messages: list[TurnAnswer] | None = Field(
        default=None, description="A page of the thread's turns, with include_messages."
    )
    next_cursor: NextCursor = None


def get(caller: Caller, req: ThreadGetRequest) -> GetAnswer:
    """Read one conversation thread, with a page of its turns if asked.

    The thread's title, metadata, counts and times; with `include_messages: true` a page of its turns
    too, oldest first or (`order: "desc"`) newest first, `next_cursor` reading on. With an `agent`,
    only that agent's copies of the turns; every agent's when omitted or `"*"`.

    Errors: 404 when there is no such thread (or it was deleted); 422 for a cursor this server did
    not issue for the same listing."""
    namespace = caller.namespace(req.namespace)
    with db.session() as s:
        thread = threads.find(s, namespace, req.thread_id)
    if thread is None:
        raise no_thread(namespace, req.thread_id)
    if not req.include_messages:
        return GetAnswer.of(thread)
    messages, next_cursor = _page(
        GET_CURSOR, namespace, req.thread_id, req.order, req.limit, req.cursor, named_agent(req)
    )
    return GetAnswer.of(thread, messages=messages, next_cursor=next_cursor)


class TurnListRequest(OpRequest):
    model_config = ConfigDict(title="ListRequest")

    thread_id: Annotated[str, Field(description="The thread whose turns to list.")] = Identifier
    run_id: str | None = Field(
        default=None, max_length=256, description="Only turns appended with this run id."
    )
    limit: int = Field(
        default=100, ge=1, le=500, description="How many turns a page holds (1-500, default 100)."
    )
    cursor: PageCursor = None


class TurnListAnswer(Answer):
    model_config = ConfigDict(title="ListAnswer")

    namespace: ActedIn
    thread_id: str = Field(description="The thread listed.")
    messages: list[TurnAnswer] = Field(description="A page of its turns in time order.")
    next_cursor: NextCursor


def list_turns(caller: Caller, req: TurnListRequest) -> TurnListAnswer:
    """List a thread's turns in time order, a page at a time.

    The transcript to replay into a model's context or to show: each turn's text, role, agent, user,
    run, metadata and screening verdict. `run_id` keeps one interaction run's turns; `next_cursor`
    reads on.

    Errors: 422 for a cursor this server did not issue for the same listing."""
    namespace = caller.namespace(req.namespace)
    with db.session() as s:
        if threads.find(s, namespace, req.thread_id) is None:
            raise no_thread(namespace, req.thread_id)
    messages, next_cursor = _page(
        LIST_CURSOR, namespace, req.thread_id, "asc", req.limit, req.cursor, named_agent(req), req.run_id
    )
    return TurnListAnswer(
        namespace=namespace, thread_id=req.thread_id, messages=messages, next_cursor=next_cursor
    )
