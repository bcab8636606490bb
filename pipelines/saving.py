"""Saving single messages: a user flags one message to find it later with
conversation.search_saved_messages, whether or not the namespace records transcripts.

A message is (namespace, thread, msg_id); each agent's copy of it is a turn. A save flags every
live copy in place (``is_saved``, ``saved_at``: run, content and time stay as recorded) and the
embedding rows that serve them; a message not stored yet is stored by the save, recording or not,
and marked ``stored_by_save`` so that unsaving it where the namespace does not record removes it.

The transcript row decides who owns a saved message: a save claims only copies no user owns or the
caller owns, in the claiming statement itself, and flags the embedding rows after the claim read
back as the caller's. Saves, unsaves, appends (``models.queries.turns.APPEND_TURN``'s gate), compaction's
retirement and thread deletion all lock the thread row first, for their short write transactions
only (no model call is made under it), so they take turns on a thread. A save is safe to repeat:
each one re-reads the message and repairs what an interrupted or concurrent write left (a missing
embedding row is written, a failed embed is asked again, an unflagged row is flagged).

The save never calls the embedder itself: it requests the embedding stage's run and the op waits
for that run's outcome for a bounded time (``ops.conversation_saved``)."""

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import text
from sqlmodel import Session

from models.conversation import EMBEDDED_ROLES
from models.settings import get_settings
from pipelines import appending, embedding, keys, retire, screening

SAVED = "saved"
OWNER_MISMATCH, DELETED, UNSUPPORTED_ROLE, HIGH = (
    "owner_mismatch",
    "deleted",
    "unsupported_role",
    "high_sensitivity",
)
EXPIRED = appending.EXPIRED  # a new message said before the retention TTL's cutoff is not stored
UNKNOWN = "unknown"  # neither stored nor carried in the request: there is nothing to save


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
    return s.execute(
        text(
            "SELECT deleted_at IS NOT NULL FROM threads "
            "WHERE namespace = :ns AND thread_id = :thread FOR UPDATE"
        ),
        {"ns": namespace, "thread": thread_id},
    ).scalar()


COPIES = text("""
SELECT id, agent, role, user_id, sensitivity, content, deleted_at IS NOT NULL AS deleted
FROM turns WHERE namespace = :ns AND thread_id = :thread AND msg_id = :msg
ORDER BY id
""")


def _copies(s: Session, m: Message) -> list:
    return s.execute(COPIES, {"ns": m.namespace, "thread": m.thread_id, "msg": m.msg_id}).all()


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
    """Save the message for ``m.user_id`` in the caller's transaction (which the caller rolls back
    on a refusal, so nothing a refused save did is kept)."""
    if m.content is not None:
        # A save that may store a new message in a new thread first writes the thread row, so that
        # the lock below holds there too: saves of one new message through two agents (whose keys
        # differ) then take turns, and the second finds the copy the first stored.
        s.execute(
            text("""
                INSERT INTO threads (namespace, thread_id, agent, metadata, turn_count, created_at,
                                     last_turn_at)
                VALUES (:ns, :thread, :agent, '{}', 0, :ts, :ts)
                ON CONFLICT (namespace, thread_id) DO NOTHING
            """),
            {"ns": m.namespace, "thread": m.thread_id, "agent": m.agent, "ts": m.ts or now},
        )
    if lock_thread(s, m.namespace, m.thread_id):
        return Saved(DELETED)
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
        text("""
            UPDATE turns SET user_id = :user, is_saved = true, saved_at = coalesce(
                (SELECT min(c.saved_at) FROM turns c
                 WHERE c.namespace = :ns AND c.thread_id = :thread AND c.msg_id = :msg
                   AND c.is_saved AND c.deleted_at IS NULL),
                :now)  -- one time for every copy: when the message was first saved
            WHERE namespace = :ns AND thread_id = :thread AND msg_id = :msg AND deleted_at IS NULL
              AND (user_id IS NULL OR user_id = :user)
            RETURNING id, saved_at
        """),
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
        text("""
            INSERT INTO turn_keys (namespace, thread_id, agent, msg_id, turn_id, ts)
            VALUES (:ns, :thread, :agent, :msg, nextval('turns_id_seq'), :ts)
            ON CONFLICT (namespace, thread_id, agent, msg_id) DO NOTHING
            RETURNING turn_id
        """),
        {"ns": m.namespace, "thread": m.thread_id, "agent": m.agent, "msg": m.msg_id, "ts": said},
    ).scalar()
    if turn_id is None:
        return False
    seq = s.execute(
        text("""
            INSERT INTO threads (namespace, thread_id, agent, metadata, turn_count, created_at, last_turn_at,
                                 last_seq)
            VALUES (:ns, :thread, :agent, '{}', 1, :ts, :ts, 1)
            ON CONFLICT (namespace, thread_id)
            DO UPDATE SET turn_count = threads.turn_count + 1,
                          last_turn_at = greatest(threads.last_turn_at, EXCLUDED.last_turn_at),
                          last_seq = threads.last_seq + 1
            RETURNING last_seq
        """),
        {"ns": m.namespace, "thread": m.thread_id, "agent": m.agent, "ts": said},
    ).scalar_one()
    s.execute(
        text("""
            INSERT INTO turns (id, namespace, thread_id, agent, msg_id, role, content, user_id, run_id,
                               metadata, sensitivity, screened_with, ts, seq, is_saved, saved_at,
                               stored_by_save)
            VALUES (:id, :ns, :thread, :agent, :msg, :role, :content, :user, :run, '{}', 'none',
                    :screened_with, :ts, :seq, true, :now, :only_saved)
        """),
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
    return True


def _index(s: Session, m: Message, live: list, saved_at: datetime, now: datetime) -> tuple[tuple, tuple]:
    """Flag the message's embedding rows, writing a missing one. Returns (the rows, the rows with
    no vector yet)."""
    params = {"ns": m.namespace, "thread": m.thread_id, "msg": m.msg_id, "user": m.user_id, "at": saved_at}
    rows = s.execute(
        text("""
            UPDATE embeddings SET is_saved = true, saved_at = :at, user_id = :user
            WHERE namespace = :ns AND thread_id = :thread AND msg_id = :msg AND deleted_at IS NULL
            RETURNING id, digest, vector IS NOT NULL AS embedded
        """),
        params,
    ).all()
    if not rows:  # an interrupted write, or an earlier build's save: the copy has no row
        copy = next((c for c in live if c.agent == m.agent), live[0])
        cut = embedding.embedding_text(copy.content, get_settings().embed_max_chars)
        rows = s.execute(
            text("""
                INSERT INTO embeddings (turn_id, namespace, thread_id, agent, msg_id, role, run_id, user_id,
                                        text, digest, created_at, is_saved, saved_at)
                SELECT id, namespace, thread_id, agent, msg_id, role, run_id, user_id, :text, :digest, :now,
                       true, :at
                FROM turns WHERE id = :turn
                RETURNING id, digest, false AS embedded
            """),
            {**params, "turn": copy.id, "text": cut, "digest": keys.digest(cut), "now": now},
        ).all()
    unembedded = tuple((row.id, row.digest) for row in rows if not row.embedded)
    # The last failure's error goes, so that the op waits for this attempt's outcome.
    s.execute(
        text("UPDATE embeddings SET error = NULL WHERE id = ANY(:ids)"), {"ids": [i for i, _ in unembedded]}
    )
    return tuple(row.id for row in rows), unembedded


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
        text("""
            SELECT id, stored_by_save FROM turns
            WHERE namespace = :ns AND thread_id = :thread AND msg_id = :msg AND deleted_at IS NULL
              AND is_saved AND user_id = :user
        """),
        {"ns": m.namespace, "thread": m.thread_id, "msg": m.msg_id, "user": m.user_id},
    ).all()
    if not mine:
        return Unsaved(False)
    gone = [c.id for c in mine if c.stored_by_save and not recording]
    s.execute(
        text(
            "UPDATE turns SET is_saved = false, saved_at = NULL, stored_by_save = false WHERE id = ANY(:ids)"
        ),
        {"ids": [c.id for c in mine if c.id not in gone]},
    )
    s.execute(
        text("""
            UPDATE embeddings SET is_saved = false, saved_at = NULL
            WHERE namespace = :ns AND thread_id = :thread AND msg_id = :msg AND deleted_at IS NULL
        """),
        {"ns": m.namespace, "thread": m.thread_id, "msg": m.msg_id},
    )
    if gone:
        s.execute(text("DELETE FROM turn_keys WHERE turn_id = ANY(:ids)"), {"ids": gone})
        s.execute(text("DELETE FROM turns WHERE id = ANY(:ids)"), {"ids": gone})
        s.execute(
            text(
                "UPDATE threads SET turn_count = greatest(turn_count - :n, 0) "
                "WHERE namespace = :ns AND thread_id = :thread"
            ),
            {"n": len(gone), "ns": m.namespace, "thread": m.thread_id},
        )
        retire.settle_rows(s, m.namespace, m.thread_id, now)  # their rows pass on or are tombstoned
    return Unsaved(True, removed=bool(gone))
