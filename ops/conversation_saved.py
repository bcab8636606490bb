"""Saved messages: conversation.save_message and unsave_message (writer), search_saved_messages,
list_saved_messages and saved_status (viewer), with the document's names (``conversation_id`` is
Loom's thread_id, ``message_id`` its msg_id). Saving ignores the namespace's Record switch and
never turns it on; the rules are ``pipelines.saving``'s.

The save writes the rows and requests the embedding stage's run in one transaction, like every
write op; then it waits, at most ``LOOM_SAVE_MESSAGE_WAIT_SECONDS``, for the worker to index the
message, so that it can answer ``indexed`` (or ``embed_failed``) as the document's save does
without the op calling the embedder."""

from datetime import datetime
from typing import Annotated, Literal

import psycopg
from pydantic import Field
from sqlalchemy.exc import IntegrityError

from models import db, partitions
from models.base import stored, utcnow
from models.conversation import MSG_ID_MAX
from models.settings import get_settings
from models.stages import EMBEDDING
from ops import cursors
from ops import search as searching
from ops.caller import NAMESPACE_WIDE, Caller
from ops.conversation_read import listing_excerpt
from ops.conversation_write import recording
from ops.errors import not_found
from ops.schemas import ActedIn, Answer, Identifier, Moment, NamespaceName, OpRequest, SaidAt
from ops.waiting import Waiting, Watch
from pipelines import saving, search
from workers import ledger, outbox

# A token minted for one end user names its namespace as "@me".
SavedNamespace = Annotated[NamespaceName | Literal["@me"] | None, Field(default=None)]
MessageId = Field(min_length=1, max_length=MSG_ID_MAX)
UserId = Field(default=None, min_length=1, max_length=256)


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


class SaveRequest(SavedOp):
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


class SaveAnswer(Answer):
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


def save(caller: Caller, req: SaveRequest) -> SaveAnswer | Waiting:
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

    def unsaved(reason: str) -> SaveAnswer:
        return SaveAnswer(
            namespace=message.namespace,
            conversation_id=req.conversation_id,
            message_id=req.message_id,
            saved=False,
            indexed=False,
            reason=reason,
        )

    try:
        done, runs = _saved(message, now)
    except IntegrityError as exc:
        if not isinstance(exc.orig, psycopg.errors.CheckViolation):
            raise
        # No partition holds the new message's month yet (imported history): the transaction
        # wrote nothing; make the month and save again, as an append does.
        with db.autocommit() as conn:
            partitions.ensure(conn, message.ts or now)
        done, runs = _saved(message, now)
    if done.outcome == saving.UNKNOWN:
        raise not_found("no such message: send role and content to save a new one", "message_id")
    if done.outcome != saving.SAVED:
        return unsaved(done.outcome)
    if runs:
        outbox.wake(EMBEDDING, [stored(run.id) for run in runs])
    run_ids = [stored(run.id) for run in runs]

    def check(final: bool) -> SaveAnswer | Watch:
        with db.session() as s:
            reason = saving.indexing(s, done.embedding_ids)
        if reason == saving.DELETED:
            return unsaved(reason)
        if reason == saving.PENDING and not final:
            return Watch(frozenset(run_ids))
        return SaveAnswer(
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
    kept for a refused save, which rolls back)."""
    with db.session() as s:
        done = saving.save(s, message, recording(s, message.namespace), now)
        if done.outcome != saving.SAVED:
            s.rollback()
            return done, []
        # A row without its vector needs its run again, whether it failed or ended without one.
        runs = [
            ledger.wanted_again(s, EMBEDDING, row, digest[:16], {}, revive=True)
            for row, digest in done.unembedded
        ]
        saving.due_now(s, [stored(run.id) for run in runs], now)
    return done, runs


def _message(caller: Caller, req: SavedOp) -> saving.Message:
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
        done = saving.unsave(s, message, recording(s, message.namespace), utcnow())
    return UnsaveAnswer(
        namespace=message.namespace,
        conversation_id=req.conversation_id,
        message_id=req.message_id,
        found=done.found,
        removed=done.removed,
    )


class SearchSavedRequest(searching.Ranking):
    namespace: SavedNamespace = Field(
        default=None,
        description=(
            'The namespace to search, or "@me" for a token bounded to one end user; may be omitted when the '
            "token covers exactly one."
        ),
    )
    user_id: Annotated[
        str | None,
        Field(
            description=(
                "The end user whose saved messages to search (1-256 characters); required unless the token "
                "is pinned to one user."
            )
        ),
    ] = UserId
    conversation_id: str | None = Field(
        default=None, max_length=256, description="Only hits of this conversation."
    )


class SavedHit(Answer):
    conversation_id: str = Field(description="The conversation of the saved message.")
    message_id: str = Field(description="The saved message's id.")
    role: str = Field(description="Who said it.")
    ts: Moment = Field(description="When the message was said.")
    saved_at: Moment | None = Field(description="When the user saved it.")
    similarity: float | None = Field(
        description="The vector leg's cosine similarity, when that leg found it."
    )
    lexical_score: float | None = Field(
        default=None, description="The BM25 score, when the lexical leg found it."
    )
    found_by: list[Literal["semantic", "lexical", "substring"]] = Field(
        description="Which legs found it: semantic, lexical, or substring."
    )
    semantic_rank: int | None = Field(default=None, description="Its 1-based rank in the vector leg.")
    lexical_rank: int | None = Field(default=None, description="Its 1-based rank in the lexical leg.")
    score: float | None = Field(default=None, description="The hybrid fused score (higher is better).")
    excerpt: str = Field(description="A piece of the message's text around the match.")


class SearchSavedAnswer(Answer):
    mode: Literal["vector", "hybrid", "lexical", "substring"] = Field(
        description=(
            "How the search ran: hybrid, vector, lexical, or substring (semantic without an embedder)."
        )
    )
    embedder_error: str | None = Field(
        default=None, description="Why the vector leg did not answer, when it fell back."
    )
    namespace: ActedIn
    user_id: str = Field(description="The user whose saved messages were searched.")
    hits: list[SavedHit] = Field(description="The matching saved messages, best first, each message once.")
    stats: searching.SearchStats = Field(description="Candidates and timings per leg.")


def _saved_hit(hit: search.Hit, mode: str, query: str, chars: int) -> SavedHit:
    return searching.scored_hit(
        SavedHit,
        hit,
        mode,
        query,
        chars,
        conversation_id=hit.thread_id,
        message_id=hit.msg_id,
        saved_at=hit.saved_at,
    )


def search_saved(caller: Caller, req: SearchSavedRequest) -> SearchSavedAnswer:
    """Search one user's saved messages by meaning and by words.

    The same hybrid search as conversation.search, over the messages this user saved in the namespace
    (each message once), optionally within one conversation."""
    namespace, user = caller.namespace(req.namespace), caller.acting_user(req.user_id)
    filters = search.Filters([namespace], thread_id=req.conversation_id, saved_by=user)
    return searching.ranked(req, filters, SearchSavedAnswer, _saved_hit, namespace=namespace, user_id=user)


class ListSavedRequest(SavedOp):
    conversation_id: str | None = Field(
        default=None, max_length=256, description="Only saved messages of this conversation."
    )
    limit: int = Field(default=50, ge=1, le=200, description="How many a page holds (1-200, default 50).")
    cursor: str | None = Field(
        default=None,
        max_length=200,
        description="The next_cursor of the previous page; omitted for the first page.",
    )


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
    next_cursor: str | None = Field(description="Pass it as cursor for the next page; null on the last page.")


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
                excerpt=listing_excerpt(row.content),
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
