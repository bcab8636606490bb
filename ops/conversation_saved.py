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
from models.base import utcnow
from models.conversation import MSG_ID_MAX
from models.settings import get_settings
from ops import cursors
from ops import search as searching
from ops.caller import Caller
from ops.conversation_read import listing_excerpt
from ops.conversation_write import recording
from ops.errors import not_found
from ops.schemas import Answer, Identifier, Moment, NamespaceName, OpRequest, SaidAt
from ops.waiting import Waiting, Watch
from pipelines import saving, search
from workers import ledger, outbox
from workers.stages.embedding import EMBEDDING

# A token minted for one end user names its namespace as "@me".
SavedNamespace = Annotated[NamespaceName | Literal["@me"] | None, Field(default=None)]
MessageId = Field(min_length=1, max_length=MSG_ID_MAX)
UserId = Field(default=None, min_length=1, max_length=256)


class SavedOp(OpRequest):
    namespace: SavedNamespace = None
    user_id: str | None = UserId  # an own_user token's user when omitted


class SaveRequest(SavedOp):
    conversation_id: str = Identifier
    message_id: str = MessageId
    # A message the transcript does not hold yet is stored from these.
    role: Literal["user", "assistant", "system", "tool"] | None = None
    content: str | None = Field(default=None, min_length=1, max_length=1_000_000)
    ts: SaidAt | None = None
    run_id: str | None = Field(default=None, max_length=256)


Reason = Literal[
    "owner_mismatch", "deleted", "unsupported_role", "high_sensitivity", "expired", "embed_failed", "pending"
]


class SaveAnswer(Answer):
    namespace: str
    conversation_id: str
    message_id: str
    saved: bool
    saved_at: Moment | None = None
    stored: bool = False  # the save wrote the transcript row
    indexed: bool
    # pending: the worker had not indexed it within the wait; it will (embedding_runs say which)
    reason: Reason | None = None
    embedding_runs: list[int] = []


def save(caller: Caller, req: SaveRequest) -> SaveAnswer | Waiting:
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
        outbox.wake(EMBEDDING.name, [run.id for run in runs])
    run_ids = [run.id for run in runs]

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
        saving.due_now(s, [run.id for run in runs], now)
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
    )


class UnsaveRequest(SavedOp):
    conversation_id: str = Identifier
    message_id: str = MessageId


class UnsaveAnswer(Answer):
    namespace: str
    conversation_id: str
    message_id: str
    found: bool  # false for a message this user did not save, whoever did: it never says why
    removed: bool = False  # the turn existed only because of the save, and is gone


def unsave(caller: Caller, req: UnsaveRequest) -> UnsaveAnswer:
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
    namespace: SavedNamespace = None
    user_id: str | None = UserId
    conversation_id: str | None = Field(default=None, max_length=256)


class SavedHit(Answer):
    conversation_id: str
    message_id: str
    role: str
    ts: Moment  # when the message was said
    saved_at: Moment | None
    similarity: float | None
    lexical_score: float | None = None
    found_by: list[Literal["semantic", "lexical", "substring"]]
    semantic_rank: int | None = None
    lexical_rank: int | None = None
    score: float | None = None
    excerpt: str


class SearchSavedAnswer(Answer):
    mode: Literal["vector", "hybrid", "lexical", "substring"]
    embedder_error: str | None = None
    namespace: str
    user_id: str
    hits: list[SavedHit]
    stats: searching.SearchStats


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
    namespace, user = caller.namespace(req.namespace), caller.acting_user(req.user_id)
    filters = search.Filters([namespace], thread_id=req.conversation_id, saved_by=user)
    return searching.ranked(req, filters, SearchSavedAnswer, _saved_hit, namespace=namespace, user_id=user)


class ListSavedRequest(SavedOp):
    conversation_id: str | None = Field(default=None, max_length=256)
    limit: int = Field(default=50, ge=1, le=200)
    cursor: str | None = Field(default=None, max_length=200)


class SavedMessage(Answer):
    conversation_id: str
    message_id: str
    role: str
    agent: str
    ts: Moment  # when the user saved it (the message's own time for a row saved without one)
    said_at: Moment
    excerpt: str  # empty for a message that reads as high


class ListSavedAnswer(Answer):
    namespace: str
    user_id: str
    messages: list[SavedMessage]
    next_cursor: str | None


# A page ends at a saved message: when it was saved, its turn's id.
LIST_SAVED_CURSOR = cursors.Kind("conversation.list_saved_messages", (datetime, int))


def list_saved(caller: Caller, req: ListSavedRequest) -> ListSavedAnswer:
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
    conversation_id: str = Identifier
    message_ids: list[Annotated[str, MessageId]] = Field(min_length=1, max_length=500)


class SavedState(Answer):
    message_id: str
    is_saved: bool
    saved_at: Moment | None = None


class SavedStatusAnswer(Answer):
    namespace: str
    user_id: str
    conversation_id: str
    messages: list[SavedState]


def saved_status(caller: Caller, req: SavedStatusRequest) -> SavedStatusAnswer:
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
