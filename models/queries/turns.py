"""Named SQL of the turns family: turns, their keys, threads (a turn's write touches them all)."""

from sqlalchemy import text

# conversation.append's write, run on the driver connection in autocommit (psycopg placeholders):
# one round trip, and being one statement it is one transaction. When the namespace records and
# the thread is not deleted: this agent's copy of the turn (unless its key, (namespace, thread_id,
# agent, msg_id), is already in turn_keys, which holds it unique across the monthly partitions of
# turns: the key is inserted first and the turn takes the id drawn for it), its thread created or
# counted (the thread's next sequence number, under the row's lock, is the turn's ``seq``), the
# LoomSessions of this agent's interaction run on the thread moved on to it, and, when the turn is
# to be embedded and no live embedding row of the thread holds the same message and text (another
# agent's copy shares that one), its embedding row and the pending stage run.
# ``gate`` locks the thread row first and reads its newest version (FOR UPDATE re-reads a row
# changed since the statement's snapshot): an append waiting on a conversation.delete sees the
# tombstone and writes nothing, and a delete waiting on an append sees its turn. Every part after
# the key selects FROM key or FROM turn, so a duplicate, a deleted thread or a namespace that does not record
# writes nothing. The embedding row's id is drawn here, so its run's subject is the id after the
# embedding stage's ``subject_prefix`` (``models.stages.EMBEDDING`` gives it and the stage's name,
# bound as %(subject_prefix)s and %(stage)s), and its key is ``loom_run_key`` of the row and the
# first 16 of the text's digest. Answers (recording, deleted, turn id or null, run id or null).
# A said turn (%(said)s: a user or assistant turn that does not read as high, as the embedded ones)
# takes its lexical context (``models.queries.contexts``) from the thread row, read at its newest
# version under the lock (the statement's snapshot may miss a turn appended a moment before): a
# said turn of a new message takes the words of the thread's latest one (its lexemes when it has
# at most %(short)s characters, else none) and becomes the latest; a copy of the latest message
# takes that message's own context.
APPEND_TURN = """
WITH recording AS (
    SELECT coalesce(
        (SELECT conversation_logging_enabled FROM namespaces WHERE name = %(namespace)s), false
    ) AS enabled
), gate AS (
    SELECT deleted_at IS NOT NULL AS deleted FROM threads
    WHERE namespace = %(namespace)s AND thread_id = %(thread_id)s
    FOR UPDATE
), key AS (
    INSERT INTO turn_keys (namespace, thread_id, agent, msg_id, turn_id, ts)
    SELECT %(namespace)s, %(thread_id)s, %(agent)s, %(msg_id)s, nextval('turns_id_seq'), %(ts)s
    FROM recording WHERE enabled AND NOT EXISTS (SELECT FROM gate WHERE deleted)
    ON CONFLICT (namespace, thread_id, agent, msg_id) DO NOTHING
    RETURNING turn_id
), thread AS (
    INSERT INTO threads (namespace, thread_id, agent, metadata, turn_count, created_at, last_turn_at,
                         last_seq, said_msg_id, said_lexemes)
    SELECT %(namespace)s, %(thread_id)s, %(agent)s, '{}', 1, %(ts)s, %(ts)s, 1,
           CASE WHEN %(said)s THEN %(msg_id)s END,
           CASE WHEN NOT %(said)s THEN NULL
                WHEN char_length(%(content)s) <= %(short)s
                THEN to_tsvector('english', CAST(%(content)s AS text)) ELSE '' END
    FROM key
    ON CONFLICT (namespace, thread_id)
    DO UPDATE SET turn_count = threads.turn_count + 1,
                  last_turn_at = greatest(threads.last_turn_at, EXCLUDED.last_turn_at),
                  last_seq = threads.last_seq + 1,
                  said_msg_id = coalesce(EXCLUDED.said_msg_id, threads.said_msg_id),
                  said_lexemes = CASE WHEN EXCLUDED.said_msg_id <> coalesce(threads.said_msg_id, '')
                                      THEN EXCLUDED.said_lexemes ELSE threads.said_lexemes END,
                  said_context = CASE WHEN EXCLUDED.said_msg_id <> coalesce(threads.said_msg_id, '')
                                      THEN nullif(threads.said_lexemes, '') ELSE threads.said_context END
    RETURNING last_seq, CASE WHEN %(said)s THEN said_context END AS context
), turn AS (
    INSERT INTO turns (id, namespace, thread_id, agent, msg_id, role, content, reasoning, name,
                       user_id, run_id, metadata, tokens, sensitivity, screened_with, ts, seq,
                       context_lexemes, context_length)
    SELECT turn_id, %(namespace)s, %(thread_id)s, %(agent)s, %(msg_id)s, %(role)s, %(content)s,
           %(reasoning)s, %(name)s, %(user_id)s, %(run_id)s, CAST(%(metadata)s AS jsonb), %(tokens)s,
           %(sensitivity)s, %(screened_with)s, %(ts)s, thread.last_seq, thread.context,
           coalesce(loom_word_count(thread.context), 0)
    FROM key, thread
    RETURNING id, seq
), session AS (
    UPDATE loom_sessions s
    SET last_sequence = greatest(s.last_sequence, turn.seq),
        last_turn_at = greatest(s.last_turn_at, %(ts)s), awaiting_night = true, date_updated = %(now)s
    FROM turn
    WHERE s.namespace = %(namespace)s AND s.thread_id = %(thread_id)s AND s.agent_name = %(agent)s
      AND s.interaction_process_id = %(interaction)s
), embedding AS (
    INSERT INTO embeddings (turn_id, namespace, thread_id, agent, msg_id, role, run_id, user_id, text,
                            digest, created_at)
    SELECT id, %(namespace)s, %(thread_id)s, %(agent)s, %(msg_id)s, %(role)s, %(run_id)s, %(user_id)s,
           %(embed_text)s, %(embed_digest)s, %(ts)s
    FROM turn WHERE %(embed)s
    ON CONFLICT (namespace, thread_id, msg_id, digest) WHERE deleted_at IS NULL DO NOTHING
    RETURNING id
), run AS (
    INSERT INTO stage_runs (stage, subject, idem_key, status, attempts, created_at, updated_at,
                            available_at)
    SELECT CAST(%(stage)s AS text), CAST(%(subject_prefix)s AS text) || id,
           loom_run_key(CAST(%(stage)s AS text), id, left(%(embed_digest)s, 16)), 'pending', 0,
           %(now)s, %(now)s, %(now)s  -- the server's times, never the turn's (it may be years old)
    FROM embedding
    RETURNING id
)
SELECT (SELECT enabled FROM recording), coalesce((SELECT deleted FROM gate), false), (SELECT id FROM turn),
       (SELECT id FROM run)
"""


# The re-screening pass's pick: the ranges of :span turn ids holding turns an older rules version
# judged, in id order (ix_turns_screened_with), of one namespace or all.
OUTDATED_SCREENING_RANGES = text("""
SELECT DISTINCT id / :span AS k FROM turns
WHERE screened_with < :version AND (CAST(:namespace AS text) IS NULL OR namespace = :namespace)
ORDER BY k
LIMIT :limit
""")
