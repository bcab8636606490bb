"""Named SQL of saved messages (``pipelines.saving``): a user's flag on a message's copies (turns)
and on the embedding rows that serve them, the copy a save stores, and the saved messages' reads.

A message is (namespace, thread_id, msg_id): most statements name it by those three and act on every
copy of it (one an agent), so that the copies stay saved, owned and unsaved together."""

from sqlalchemy import text

# Saves and unsaves lock the thread row first, as appends (turns.APPEND_TURN's gate), compaction's
# retirement and thread deletion do, so that their short write transactions on a thread take turns.
# FOR UPDATE re-reads a row changed since the snapshot: a deletion that committed meanwhile is seen.
# Answers whether the thread is deleted (no row: no such thread).
LOCK_THREAD = text(
    "SELECT deleted_at IS NOT NULL FROM threads WHERE namespace = :ns AND thread_id = :thread FOR UPDATE"
)

# A save that may store a new message in a new thread first writes the thread row (no turn counted:
# STORE_THREAD_TURN counts the one it stores), so that LOCK_THREAD holds there too: saves of one new
# message through two agents (whose keys differ) then take turns, and the second finds the copy the
# first stored.
OPEN_THREAD = text("""
INSERT INTO threads (namespace, thread_id, agent, metadata, turn_count, created_at, last_turn_at)
VALUES (:ns, :thread, :agent, '{}', 0, :ts, :ts)
ON CONFLICT (namespace, thread_id) DO NOTHING
""")

# Whether a user takes part in a thread (owns a live turn there), or the thread is new (holds no turn,
# tombstoned ones included): where a token bounded to its user may claim or store a message.
TAKES_PART = text("""
SELECT EXISTS (SELECT 1 FROM turns WHERE namespace = :ns AND thread_id = :thread AND user_id = :user
               AND deleted_at IS NULL)
    OR NOT EXISTS (SELECT 1 FROM turns WHERE namespace = :ns AND thread_id = :thread)
""")

# Every copy of the message, tombstoned ones too (a save refuses a message whose every copy is
# deleted or compacted), with what the save's refusals read; in id order, the oldest copy first.
COPIES = text("""
SELECT id, agent, role, user_id, sensitivity, content, deleted_at IS NOT NULL AS deleted
FROM turns WHERE namespace = :ns AND thread_id = :thread AND msg_id = :msg
ORDER BY id
""")

# The claim: the live copies no user owns or the caller owns take the caller as owner and the flag,
# in the statement itself, so that two users' saves cannot both claim a copy; the caller compares
# the copies claimed with the copies read. Every copy takes one time, when the message was first
# saved (a copy stored or saved later takes its siblings' time).
CLAIM_COPIES = text("""
UPDATE turns SET user_id = :user, is_saved = true, saved_at = coalesce(
    (SELECT min(c.saved_at) FROM turns c
     WHERE c.namespace = :ns AND c.thread_id = :thread AND c.msg_id = :msg
       AND c.is_saved AND c.deleted_at IS NULL),
    :now)  -- one time for every copy: when the message was first saved
WHERE namespace = :ns AND thread_id = :thread AND msg_id = :msg AND deleted_at IS NULL
  AND (user_id IS NULL OR user_id = :user)
RETURNING id, saved_at
""")

# Storing a message the transcript does not hold, in three statements as APPEND_TURN does in one:
# the copy's key first (turn_keys holds it unique across the monthly partitions of turns), which
# deduplicates two saves of one new message (no row: a concurrent write holds the key), and draws
# the turn's id.
STORE_KEY = text("""
INSERT INTO turn_keys (namespace, thread_id, agent, msg_id, turn_id, ts)
VALUES (:ns, :thread, :agent, :msg, nextval('turns_id_seq'), :ts)
ON CONFLICT (namespace, thread_id, agent, msg_id) DO NOTHING
RETURNING turn_id
""")

# Then the thread counts the turn, under the row's lock, and answers its next sequence number (the
# turn's ``seq``), as APPEND_TURN's ``thread`` part does.
STORE_THREAD_TURN = text("""
INSERT INTO threads (namespace, thread_id, agent, metadata, turn_count, created_at, last_turn_at,
                     last_seq)
VALUES (:ns, :thread, :agent, '{}', 1, :ts, :ts, 1)
ON CONFLICT (namespace, thread_id)
DO UPDATE SET turn_count = threads.turn_count + 1,
              last_turn_at = greatest(threads.last_turn_at, EXCLUDED.last_turn_at),
              last_seq = threads.last_seq + 1
RETURNING last_seq
""")

# Then the turn itself, saved at once and screened by the caller (a save refuses a text that reads as
# high before it stores it, so its sensitivity is 'none'); ``stored_by_save`` when the namespace does
# not record, so that unsaving it removes it.
STORE_TURN = text("""
INSERT INTO turns (id, namespace, thread_id, agent, msg_id, role, content, user_id, run_id,
                   metadata, sensitivity, screened_with, ts, seq, is_saved, saved_at,
                   stored_by_save)
VALUES (:id, :ns, :thread, :agent, :msg, :role, :content, :user, :run, '{}', 'none',
        :screened_with, :ts, :seq, true, :now, :only_saved)
""")

# The message's live embedding rows take the flag and the owner after the claim (a row carries them
# so that search_saved_messages reads the embeddings' index alone); answers which have their vector.
FLAG_ROWS = text("""
UPDATE embeddings SET is_saved = true, saved_at = :at, user_id = :user
WHERE namespace = :ns AND thread_id = :thread AND msg_id = :msg AND deleted_at IS NULL
RETURNING id, digest, vector IS NOT NULL AS embedded
""")

# A copy with no embedding row (an interrupted write, or an earlier build's save) gets one, flagged,
# its text cut by the caller; copied from the turn's own columns so the row scopes as the turn does.
WRITE_MISSING_ROW = text("""
INSERT INTO embeddings (turn_id, namespace, thread_id, agent, msg_id, role, run_id, user_id,
                        text, digest, created_at, is_saved, saved_at)
SELECT id, namespace, thread_id, agent, msg_id, role, run_id, user_id, :text, :digest, :now,
       true, :at
FROM turns WHERE id = :turn
RETURNING id, digest, false AS embedded
""")

# The last failure's error goes, so that the op waits for this attempt's outcome.
CLEAR_ROW_ERRORS = text("UPDATE embeddings SET error = NULL WHERE id = ANY(:ids)")

# Saving again retries at once, not after the backoff an earlier failure left on the row's run
# (only a pending run: a running one is being worked on).
RUNS_DUE_NOW = text("UPDATE stage_runs SET available_at = :now WHERE id = ANY(:ids) AND status = 'pending'")

# What the op answers of a save's rows: embedded, failed, or tombstoned since (a row missing from
# the answer was removed with its thread).
ROW_STATES = text("""
SELECT vector IS NOT NULL, error IS NOT NULL, deleted_at IS NOT NULL FROM embeddings WHERE id = ANY(:ids)
""")

# An unsave withdraws only the caller's own saved copies (another user's save is not the caller's to
# withdraw, and is not said to exist); ``stored_by_save`` picks those the save alone wrote.
OWN_COPIES = text("""
SELECT id, stored_by_save FROM turns
WHERE namespace = :ns AND thread_id = :thread AND msg_id = :msg AND deleted_at IS NULL
  AND is_saved AND user_id = :user
""")

# The copies that stay in the transcript lose the flag, and the mark: a copy the save stored stays
# when the namespace records now, the transcript's from then on.
UNFLAG_COPIES = text(
    "UPDATE turns SET is_saved = false, saved_at = NULL, stored_by_save = false WHERE id = ANY(:ids)"
)

# And so do the message's live embedding rows (their owner stays, as the copies' does).
UNFLAG_ROWS = text("""
UPDATE embeddings SET is_saved = false, saved_at = NULL
WHERE namespace = :ns AND thread_id = :thread AND msg_id = :msg AND deleted_at IS NULL
""")

# A copy the save stored where the namespace does not record is removed, its key first, so that
# saving the message again stores it anew; then the thread counts it no more.
REMOVE_KEYS = text("DELETE FROM turn_keys WHERE turn_id = ANY(:ids)")
REMOVE_TURNS = text("DELETE FROM turns WHERE id = ANY(:ids)")
UNCOUNT_TURNS = text("""
UPDATE threads SET turn_count = greatest(turn_count - :n, 0) WHERE namespace = :ns AND thread_id = :thread
""")

# list_saved_messages' page, a template: ``{more}`` is empty, or LISTED_IN_THREAD and LISTED_AFTER
# (fixed text, values bound), so each combination is a statement of its own, for the index made for
# this read (ix_turns_saved, migration 0015). Each message once (its agents' copies share a saved time: the
# lowest id stands for them), then the page in the cursor's order, saved time and id, one row beyond
# :limit to tell whether another page follows. A row saved without a time sorts by its own.
LIST_SAVED = """
SELECT * FROM (
SELECT DISTINCT ON (coalesce(saved_at, ts), thread_id, msg_id)
       id, thread_id, msg_id, role, agent, content, ts, coalesce(saved_at, ts) AS saved
FROM turns
WHERE namespace = :ns AND user_id = :user AND is_saved AND deleted_at IS NULL {more}
ORDER BY coalesce(saved_at, ts) DESC, thread_id, msg_id, id
) m ORDER BY saved DESC, id DESC LIMIT :limit
"""
LISTED_IN_THREAD = " AND thread_id = :thread"
LISTED_AFTER = " AND (coalesce(saved_at, ts), id) < (:after_saved, :after_id)"

# saved_status: of the messages named, those the caller saved, with when (their copies' first time).
SAVED_AT = text("""
SELECT msg_id, min(coalesce(saved_at, ts)) FROM turns
WHERE namespace = :ns AND thread_id = :thread AND msg_id = ANY(:ids)
  AND user_id = :user AND is_saved AND deleted_at IS NULL
GROUP BY msg_id
""")
