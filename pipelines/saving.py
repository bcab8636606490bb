"""Saving single messages: a user flags one message to find it later with
conversation.search_saved_messages, whether or not the namespace records transcripts.

A message is (namespace, thread, msg_id); each agent's copy of it is a turn. A save flags every
live copy in place (``is_saved``, ``saved_at``: run, content and time stay as recorded) and the
embedding rows that serve them; a message not stored yet is stored by the save, recording or not,
and marked ``stored_by_save`` so that unsaving it where the namespace does not record removes it.

The transcript row decides who owns a saved message: a save claims only copies no user owns or the
caller owns, in the claiming statement itself (and, for a token bounded to its user, only in a
conversation where the user owns a turn or in a new one, so that no unowned turn of another's
conversation becomes hers), and flags the embedding rows after the claim read
back as the caller's. Saves, unsaves, appends (``models.queries.turns.APPEND_TURN``'s gate), compaction's
retirement and thread deletion all lock the thread row first, for their short write transactions
only (no model call is made under it), so they take turns on a thread. A save is safe to repeat:
each one re-reads the message and repairs what an interrupted or concurrent write left (a missing
embedding row is written, a failed embed is asked again, an unflagged row is flagged).

The save never calls the embedder itself: it requests the embedding stage's run and the op waits
for that run's outcome for a bounded time (``ops.saved_messages``)."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

import psycopg
from sqlalchemy import Row
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from models import db, partitions
from models.conversation import EMBEDDED_ROLES
from models.queries import filled
from models.queries import saved as queries
from models.settings import get_settings
from pipelines import appending, contexts, embedding, keys, retire, screening

SAVED = "saved"
OWNER_MISMATCH, DELETED, UNSUPPORTED_ROLE, HIGH = (
    "owner_mismatch",
    "deleted",
    "unsupported_role",
    "high_sensitivity",
)
EXPIRED = appending.EXPIRED  # a new message said before the retention TTL's cutoff is not stored
UNKNOWN = "unknown"  # neither stored nor carried in the request: there is nothing to save
EMBED_FAILED, PENDING = "embed_failed", "pending"  # a saved message's rows, not indexed (``indexing``)


@dataclass(frozen=True)
class Message:
    """What a save names, and carries for a message the transcript does not hold yet."""

    namespace: str
    thread_id: str
    msg_id: str
    user_id: str
    agent: str
    role: str | None = None
    content: str | None = None
    ts: datetime | None = None
    run_id: str | None = None
    # A token bounded to its user acts only in a conversation the user takes part in, or a new one.
    participant_only: bool = False


@dataclass(frozen=True)
class Saved:
    outcome: str  # SAVED or the reason it was refused
    saved_at: datetime | None = None
    stored: bool = False  # the save wrote the transcript row
    embedding_ids: tuple[int, ...] = ()  # the rows whose vectors make it searchable
    # (row id, digest) of those without a vector yet: the caller requests their embedding runs
    unembedded: tuple[tuple[int, str], ...] = ()


def lock_thread(s: Session, namespace: str, thread_id: str) -> bool | None:
    """Lock the thread row for this transaction; whether it is deleted (None: no such thread)."""
    return s.execute(queries.LOCK_THREAD, {"ns": namespace, "thread": thread_id}).scalar()


def takes_part(s: Session, namespace: str, thread_id: str, user_id: str) -> bool:
    """Whether the user owns a live turn of the thread, or the thread holds no turn yet."""
    return s.execute(queries.TAKES_PART, {"ns": namespace, "thread": thread_id, "user": user_id}).scalar_one()


def _copies(s: Session, m: Message) -> Sequence[Row]:
    return s.execute(queries.COPIES, {"ns": m.namespace, "thread": m.thread_id, "msg": m.msg_id}).all()


def _refusal(live: list, user_id: str) -> str | None:
    if any(c.user_id not in (None, user_id) for c in live):
        return OWNER_MISMATCH
    if any(c.role not in EMBEDDED_ROLES for c in live):
        return UNSUPPORTED_ROLE
    # Screened again: a row an earlier build's rules passed may read as high under today's.
    if any(c.sensitivity == screening.HIGH or screening.is_high(c.content) for c in live):
        return HIGH
    return None


def save(s: Session, m: Message, recording: bool, now: datetime) -> Saved:
    """Save the message for ``m.user_id`` in the caller's transaction, which a refusal rolls back:
    nothing a refused save did is kept."""
    done = _save(s, m, recording, now)
    if done.outcome != SAVED:
        s.rollback()
    return done


def _save(s: Session, m: Message, recording: bool, now: datetime) -> Saved:
    if m.content is not None:
        # The thread row first, so that the lock below holds for a new thread too (OPEN_THREAD).
        s.execute(
            queries.OPEN_THREAD,
            {"ns": m.namespace, "thread": m.thread_id, "agent": m.agent, "ts": m.ts or now},
        )
    if lock_thread(s, m.namespace, m.thread_id):
        return Saved(DELETED)
    if m.participant_only and not takes_part(s, m.namespace, m.thread_id, m.user_id):
        return Saved(OWNER_MISMATCH)  # another's conversation: nothing of it is hers to claim
    copies = _copies(s, m)
    stored = False
    if not [c for c in copies if not c.deleted]:
        if copies:
            return Saved(DELETED)  # tombstoned by a deletion or a compaction
        if m.content is None or m.role is None:
            return Saved(UNKNOWN)
        if m.role not in EMBEDDED_ROLES:
            return Saved(UNSUPPORTED_ROLE)
        if screening.is_high(m.content):
            return Saved(HIGH)
        if appending.expired(m.ts or now):
            return Saved(EXPIRED)
        stored = _store(s, m, recording, now)
        copies = _copies(s, m)  # ours, or the copy a concurrent save or append wrote first
    live = [c for c in copies if not c.deleted]
    if refusal := _refusal(live, m.user_id):
        return Saved(refusal)
    claimed = s.execute(
        queries.CLAIM_COPIES,
        {"ns": m.namespace, "thread": m.thread_id, "msg": m.msg_id, "user": m.user_id, "now": now},
    ).all()
    if len(claimed) != len(live):
        return Saved(OWNER_MISMATCH)  # a copy another user owns
    saved_at = min(row.saved_at for row in claimed)
    rows, unembedded = _index(s, m, live, saved_at, now)
    return Saved(SAVED, saved_at, stored, rows, unembedded)


def _store(s: Session, m: Message, recording: bool, now: datetime) -> bool:
    """Write the message as the caller's agent's copy, saved; False when a concurrent write already
    holds that copy's key (its insert is the deduplication of two saves of one new message)."""
    said = m.ts or now
    turn_id = s.execute(
        queries.STORE_KEY,
        {"ns": m.namespace, "thread": m.thread_id, "agent": m.agent, "msg": m.msg_id, "ts": said},
    ).scalar()
    if turn_id is None:
        return False
    seq = s.execute(
        queries.STORE_THREAD_TURN,
        {"ns": m.namespace, "thread": m.thread_id, "agent": m.agent, "ts": said},
    ).scalar_one()
    s.execute(
        queries.STORE_TURN,
        {
            "id": turn_id,
            "ns": m.namespace,
            "thread": m.thread_id,
            "agent": m.agent,
            "msg": m.msg_id,
            "role": m.role,
            "content": m.content,
            "user": m.user_id,
            "run": m.run_id,
            "screened_with": screening.RULES_VERSION,
            "ts": said,
            "seq": seq,
            "now": now,
            "only_saved": not recording,
        },
    )
    contexts.rebuild(s, [(m.namespace, m.thread_id)])  # its context, and it the next one's
    return True


def _index(s: Session, m: Message, live: list, saved_at: datetime, now: datetime) -> tuple[tuple, tuple]:
    """Flag the message's embedding rows, writing a missing one. Returns (the rows, the rows with
    no vector yet)."""
    params = {"ns": m.namespace, "thread": m.thread_id, "msg": m.msg_id, "user": m.user_id, "at": saved_at}
    rows = s.execute(queries.FLAG_ROWS, params).all()
    if not rows:  # an interrupted write, or an earlier build's save: the copy has no row
        copy = next((c for c in live if c.agent == m.agent), live[0])
        cut = embedding.embedding_text(copy.content, get_settings().embed_max_chars)
        rows = s.execute(
            queries.WRITE_MISSING_ROW,
            {**params, "turn": copy.id, "text": cut, "digest": keys.digest(cut), "now": now},
        ).all()
    unembedded = tuple((row.id, row.digest) for row in rows if not row.embedded)
    s.execute(queries.CLEAR_ROW_ERRORS, {"ids": [i for i, _ in unembedded]})
    return tuple(row.id for row in rows), unembedded


T = TypeVar("T")


def in_its_month(said: datetime, save: Callable[[], T]) -> T:
    """``save`` (the transaction that saves a message said then), done again once the month's
    partition is made when no partition held it yet (imported history): the transaction that
    failed wrote nothing, as an append's."""
    try:
        return save()
    except IntegrityError as exc:
        if not isinstance(exc.orig, psycopg.errors.CheckViolation):
            raise
        with db.autocommit() as conn:
            partitions.ensure(conn, said)
        return save()


def due_now(s: Session, run_ids: list[int], now: datetime) -> None:
    """The save's pending embedding runs are due at once: saving again retries now, not after the
    backoff an earlier failure left."""
    s.execute(queries.RUNS_DUE_NOW, {"ids": run_ids, "now": now})


def indexing(s: Session, rows: tuple[int, ...]) -> str | None:
    """Where the saved message's embedding rows stand: None once every row has its vector;
    EMBED_FAILED once one has an error; DELETED once one is tombstoned (its thread was deleted right
    after the save); PENDING before."""
    states = s.execute(queries.ROW_STATES, {"ids": list(rows)}).all()
    if len(states) < len(rows) or any(gone for _, _, gone in states):
        return DELETED
    if all(embedded for embedded, _, _ in states):
        return None
    if any(failed for _, failed, _ in states):
        return EMBED_FAILED
    return PENDING


@dataclass(frozen=True)
class Unsaved:
    found: bool
    removed: bool = False


def unsave(s: Session, m: Message, recording: bool, now: datetime) -> Unsaved:
    """Withdraw the message from its owner's saved messages, in the caller's transaction. A copy the
    save stored where the namespace does not record is removed (its key too, so saving again
    stores it anew) and its embedding row is tombstoned, so a late vector cannot bring it back; any
    other copy stays in the transcript with its flag cleared."""
    if lock_thread(s, m.namespace, m.thread_id) is None:
        return Unsaved(False)
    mine = s.execute(
        queries.OWN_COPIES,
        {"ns": m.namespace, "thread": m.thread_id, "msg": m.msg_id, "user": m.user_id},
    ).all()
    if not mine:
        return Unsaved(False)
    gone = [c.id for c in mine if c.stored_by_save and not recording]
    s.execute(queries.UNFLAG_COPIES, {"ids": [c.id for c in mine if c.id not in gone]})
    s.execute(queries.UNFLAG_ROWS, {"ns": m.namespace, "thread": m.thread_id, "msg": m.msg_id})
    if gone:
        s.execute(queries.REMOVE_KEYS, {"ids": gone})
        s.execute(queries.REMOVE_TURNS, {"ids": gone})
        s.execute(
            queries.UNCOUNT_TURNS,
            {"n": len(gone), "ns": m.namespace, "thread": m.thread_id},
        )
        retire.settle_rows(s, m.namespace, m.thread_id, now)  # their rows pass on or are tombstoned
        contexts.rebuild(s, [(m.namespace, m.thread_id)])  # and no context keeps their words
    return Unsaved(True, removed=bool(gone))


def listed(
    s: Session, namespace: str, user_id: str, thread_id: str | None, after: tuple | None, limit: int
) -> Sequence[Row]:
    """A page of the user's saved messages (in one thread, with ``thread_id``), the last saved
    first, after ``after`` (a saved time and turn id, the last row of the page before), at most
    ``limit``: each row a message (id, thread_id, msg_id, role, agent, content, ts, saved)."""
    more, params = "", {"ns": namespace, "user": user_id, "limit": limit}
    if thread_id is not None:
        more += queries.LISTED_IN_THREAD
        params["thread"] = thread_id
    if after is not None:
        more += queries.LISTED_AFTER
        params["after_saved"], params["after_id"] = after
    return s.execute(filled(queries.LIST_SAVED, more=more), params).all()


def saved_times(s: Session, namespace: str, thread_id: str, msg_ids: list[str], user_id: str) -> dict:
    """Of these messages of the thread, those the user saved: msg_id -> when it was saved."""
    params = {"ns": namespace, "thread": thread_id, "ids": msg_ids, "user": user_id}
    return dict(s.execute(queries.SAVED_AT, params).all())
