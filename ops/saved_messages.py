"""Saved messages: conversation.save_message and unsave_message (writer), list_saved_messages and
saved_status (viewer; search_saved_messages is ``ops.search``'s), with the document's names
(``conversation_id`` is Loom's thread_id, ``message_id`` its msg_id). Saving ignores the
namespace's Record switch and never turns it on; the rules are ``pipelines.saving``'s.

The save writes the rows and requests the embedding stage's run in one transaction, like every
write op; then it waits, at most ``LOOM_SAVE_MESSAGE_WAIT_SECONDS``, for the worker to index the
message, so that it can answer ``indexed`` (or ``embed_failed``) as the document's save does
without the op calling the embedder."""

from datetime import datetime
from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from models import db
from models.base import stored, utcnow
from models.conversation import MSG_ID_MAX
from models.settings import get_settings
from models.stages import EMBEDDING
from ops import cursors
from ops.caller import NAMESPACE_WIDE, Caller
from ops.errors import not_found
from ops.schemas import (
    ActedIn,
    Answer,
    Identifier,
    Moment,
    NextCursor,
    OpRequest,
    PageCursor,
    SaidAt,
    SavedNamespace,
    UserId,
)
from ops.waiting import Waiting, Watch
from pipelines import listing, recording, saving
from workers import ledger, outbox

MessageId = Field(min_length=1, max_length=MSG_ID_MAX)


class SavedOp(OpRequest):
    namespace: SavedNamespace = Field(
        default=None,
        description=(
            'The namespace to act in, or "@me" for a token bounded to one end user; may be omitted when the '
            "token covers exactly one."
        ),
    )
    user_id: Annotated[
        str | None,
        Field(
            description=(
                "The end user whose saved messages these are (1-256 characters); required unless the token "
                'is pinned to one user (its own then, or "@me"\'s).'
            )
        ),
    ] = UserId


class SaveMessageRequest(SavedOp):
    model_config = ConfigDict(title="SaveRequest")

    conversation_id: Annotated[
        str, Field(description="The conversation (thread) the message belongs to (1-256 characters).")
    ] = Identifier
    message_id: Annotated[
        str, Field(description="The message's id in that conversation (its msg_id, at most 128 characters).")
    ] = MessageId
    # A message the transcript does not hold yet is stored from these.
    role: Literal["user", "assistant", "system", "tool"] | None = Field(
        default=None,
        description=(
            "For a message the transcript does not hold yet: who said it (user, assistant, system or tool)."
        ),
    )
    content: str | None = Field(
        default=None,
        min_length=1,
        max_length=1_000_000,
        description="For a message the transcript does not hold yet: its text (1-1,000,000 characters).",
    )
    ts: SaidAt | None = Field(
        default=None, description="For a new message: when it was said, with its UTC offset (default now)."
    )
    run_id: str | None = Field(
        default=None, max_length=256, description="For a new message: the interaction run it was said in."
    )


Reason = Literal[
    "owner_mismatch", "deleted", "unsupported_role", "high_sensitivity", "expired", "embed_failed", "pending"
]


class SaveMessageAnswer(Answer):
    model_config = ConfigDict(title="SaveAnswer")

    namespace: ActedIn
    conversation_id: str = Field(description="The conversation of the message.")
    message_id: str = Field(description="The message saved.")
    saved: bool = Field(
        description="Whether the message is now in the user's saved messages; false with a reason otherwise."
    )
    saved_at: Moment | None = Field(default=None, description="When the user saved it.")
    stored: bool = Field(
        default=False,
        description="Whether the save wrote the message into the transcript (it did not hold it).",
    )
    indexed: bool = Field(description="Whether the message is embedded and searchable now.")
    # pending: the worker had not indexed it within the wait; it will (embedding_runs say which)
    reason: Reason | None = Field(
        default=None,
        description=(
            "Why not saved or not indexed: owner_mismatch (another user owns it), deleted, unsupported_role "
            "(system/tool), high_sensitivity, expired, embed_failed, or pending (the worker had not indexed "
            "it in time: see embedding_runs)."
        ),
    )
    embedding_runs: list[int] = Field(
        default=[], description="The embedding runs to wait on when reason is pending."
    )


def save(caller: Caller, req: SaveMessageRequest) -> SaveMessageAnswer | Waiting[SaveMessageAnswer]:
    """Save one message to a user's saved messages, to find it later.

    Works whether or not the namespace records: a message the transcript holds is flagged in place,
    one it does not hold is stored from `role` and `content`. The message is indexed by the worker;
    the answer says `indexed`, or `reason: "pending"` with the embedding runs to wait on. A refusal
    writes nothing and answers `saved: false` with a reason (`owner_mismatch`, `deleted`,
    `unsupported_role`, `high_sensitivity`, `expired`).

    Errors: 404 for a message the transcript does not hold, sent without role and content; 403 for a
    token pinned to another user."""
    message = _message(caller, req)
    now = utcnow()

    def unsaved(reason: str) -> SaveMessageAnswer:
        return SaveMessageAnswer(
            namespace=message.namespace,
            conversation_id=req.conversation_id,
            message_id=req.message_id,
            saved=False,
            indexed=False,
            reason=reason,
        )

    done, runs = saving.in_its_month(message.ts or now, lambda: _saved(message, now))
    if done.outcome == saving.UNKNOWN:
        raise not_found("no such message: send role and content to save a new one", "message_id")
    if done.outcome != saving.SAVED:
        return unsaved(done.outcome)
    if runs:
        outbox.wake(EMBEDDING, [stored(run.id) for run in runs])
    run_ids = [stored(run.id) for run in runs]

    def check(final: bool) -> SaveMessageAnswer | Watch:
        with db.session() as s:
            reason = saving.indexing(s, done.embedding_ids)
        if reason == saving.DELETED:
            return unsaved(reason)
        if reason == saving.PENDING and not final:
            return Watch(frozenset(run_ids))
        return SaveMessageAnswer(
            namespace=message.namespace,
            conversation_id=req.conversation_id,
            message_id=req.message_id,
            saved=True,
            saved_at=done.saved_at,
            stored=done.stored,
            indexed=reason is None,
            reason=reason,
            embedding_runs=run_ids if reason == saving.PENDING else [],
        )

    return Waiting(check, get_settings().save_message_wait_seconds)


def _saved(message: saving.Message, now: datetime) -> tuple[saving.Saved, list]:
    """The save's transaction: the rows, and the embedding runs of those without a vector (none
    for a refused save, which the pipeline rolls back)."""
    with db.session() as s:
        done = saving.save(s, message, recording.recording(s, message.namespace), now)
        if done.outcome != saving.SAVED:
            return done, []
        # A row without its vector needs its run again, whether it failed or ended without one.
        runs = [
            ledger.wanted_again(s, EMBEDDING, row, digest[:16], {}, revive=True)
            for row, digest in done.unembedded
        ]
        saving.due_now(s, [stored(run.id) for run in runs], now)
    return done, runs


def _message(caller: Caller, req: "SaveMessageRequest | UnsaveRequest") -> saving.Message:
    return saving.Message(
        namespace=caller.namespace(req.namespace),
        thread_id=req.conversation_id,
        msg_id=req.message_id,
        user_id=caller.acting_user(req.user_id),
        agent=req.agent,
        role=getattr(req, "role", None),
        content=getattr(req, "content", None),
        ts=getattr(req, "ts", None),
        run_id=getattr(req, "run_id", None),
        participant_only=caller.read_scope != NAMESPACE_WIDE,
    )


class UnsaveRequest(SavedOp):
    conversation_id: Annotated[str, Field(description="The conversation of the message.")] = Identifier
    message_id: Annotated[
        str, Field(description="The message to withdraw from the user's saved messages.")
    ] = MessageId


class UnsaveAnswer(Answer):
    namespace: ActedIn
    conversation_id: str = Field(description="The conversation of the message.")
    message_id: str = Field(description="The message asked about.")
    found: bool = Field(
        description="Whether this user had saved it (false, whoever else did: it never says why)."
    )
    removed: bool = Field(
        default=False,
        description=(
            "Whether the message itself was removed: a message only the save stored, in a namespace that "
            "does not record."
        ),
    )


def unsave(caller: Caller, req: UnsaveRequest) -> UnsaveAnswer:
    """Withdraw a message from a user's saved messages.

    The turn stays in the transcript with its flag cleared, unless only the save had stored it in a
    namespace that does not record (then it is removed: `removed: true`). A message this user has not
    saved answers `found: false`."""
    message = _message(caller, req)
    with db.session() as s:
        done = saving.unsave(s, message, recording.recording(s, message.namespace), utcnow())
    return UnsaveAnswer(
        namespace=message.namespace,
        conversation_id=req.conversation_id,
        message_id=req.message_id,
        found=done.found,
        removed=done.removed,
    )


class ListSavedRequest(SavedOp):
    conversation_id: str | None = Field(
        default=None, max_length=256, description="Only saved messages of this conversation."
    )
    limit: int = Field(default=50, ge=1, le=200, description="How many a page holds (1-200, default 50).")
    cursor: PageCursor = None


class SavedMessage(Answer):
    conversation_id: str = Field(description="The conversation of the saved message.")
    message_id: str = Field(description="The saved message's id.")
    role: str = Field(description="Who said it.")
    agent: str = Field(description="The agent whose copy was saved.")
    ts: Moment = Field(
        description="When the user saved it, the listing's order, newest first (the message's own time for a "
        "row saved without one)."
    )
    said_at: Moment = Field(description="When the message itself was said.")
    excerpt: str = Field(
        description="The start of the message's text; empty for a message that reads as high."
    )


class ListSavedAnswer(Answer):
    namespace: ActedIn
    user_id: str = Field(description="The user whose saved messages these are.")
    messages: list[SavedMessage] = Field(description="A page of saved messages, newest saved first.")
    next_cursor: NextCursor


# A page ends at a saved message: when it was saved, its turn's id.
LIST_SAVED_CURSOR = cursors.Kind("conversation.list_saved_messages", (datetime, int))


def list_saved(caller: Caller, req: ListSavedRequest) -> ListSavedAnswer:
    """List one user's saved messages, newest saved first.

    A page at a time (`next_cursor` reads on), optionally within one conversation.

    Errors: 422 for a cursor this server did not issue for the same listing."""
    namespace, user = caller.namespace(req.namespace), caller.acting_user(req.user_id)
    scope = (namespace, user, req.conversation_id)
    after = None if req.cursor is None else cursors.decode(LIST_SAVED_CURSOR, scope, req.cursor)
    with db.session() as s:
        rows = saving.listed(s, namespace, user, req.conversation_id, after, req.limit + 1)
    page = rows[: req.limit]
    return ListSavedAnswer(
        namespace=namespace,
        user_id=user,
        messages=[
            SavedMessage(
                conversation_id=row.thread_id,
                message_id=row.msg_id,
                role=row.role,
                agent=row.agent,
                ts=row.saved,
                said_at=row.ts,
                excerpt=listing.excerpt(row.content),
            )
            for row in page
        ],
        next_cursor=(
            cursors.encode(LIST_SAVED_CURSOR, scope, (page[-1].saved, page[-1].id))
            if len(rows) > req.limit
            else None
        ),
    )


class SavedStatusRequest(SavedOp):
    conversation_id: Annotated[str, Field(description="The conversation the messages are in.")] = Identifier
    message_ids: list[Annotated[str, MessageId]] = Field(
        min_length=1, max_length=500, description="The message ids to check (1-500)."
    )


class SavedState(Answer):
    message_id: str = Field(description="A message id asked about.")
    is_saved: bool = Field(description="Whether this user has saved it.")
    saved_at: Moment | None = Field(default=None, description="When this user saved it, if saved.")


class SavedStatusAnswer(Answer):
    namespace: ActedIn
    user_id: str = Field(description="The user asked about.")
    conversation_id: str = Field(description="The conversation asked about.")
    messages: list[SavedState] = Field(
        description="Each message id asked about, with whether this user saved it."
    )


def saved_status(caller: Caller, req: SavedStatusRequest) -> SavedStatusAnswer:
    """Tell which of a conversation's messages a user has saved.

    For up to 500 message ids at once: each one's `is_saved` and `saved_at` for this user, to show a
    conversation with its saved flags."""
    namespace, user = caller.namespace(req.namespace), caller.acting_user(req.user_id)
    with db.session() as s:
        saved = saving.saved_times(s, namespace, req.conversation_id, req.message_ids, user)
    return SavedStatusAnswer(
        namespace=namespace,
        user_id=user,
        conversation_id=req.conversation_id,
        messages=[
            SavedState(message_id=m, is_saved=m in saved, saved_at=saved.get(m))
            for m in dict.fromkeys(req.message_ids)
        ],
    )
