"""Hand-written SQL, kept as named queries, for paths measured in bench/ where one statement does
what several ORM round trips would."""

from sqlalchemy import text

# conversation.append's write, run on the driver connection in autocommit (psycopg placeholders):
# one round trip, and being one statement it is one transaction. When the namespace records: the
# turn (unless (namespace, thread_id, msg_id) is already there), its thread created or counted,
# and, when the turn is to be embedded, its embedding row and the pending stage run. Every part
# after the turn selects FROM turn, so a duplicate or a namespace that does not record writes
# nothing. The turn's id is drawn here, so the run's subject ("turn:<id>", read back by
# ``pipelines.keys.subject_id``) and idempotency key ("embed:<id>:<first 16 of the text's
# digest>") are spelled here too. Answers (recording, turn id or null, run id or null).
APPEND_TURN = """
WITH recording AS (
    SELECT coalesce(
        (SELECT conversation_logging_enabled FROM namespaces WHERE name = %(namespace)s), false
    ) AS enabled
), turn AS (
    INSERT INTO turns (namespace, thread_id, agent, msg_id, role, content, reasoning, user_id,
                       run_id, metadata, tokens, sensitivity, ts)
    SELECT %(namespace)s, %(thread_id)s, %(agent)s, %(msg_id)s, %(role)s, %(content)s, %(reasoning)s,
           %(user_id)s, %(run_id)s, CAST(%(metadata)s AS jsonb), %(tokens)s, %(sensitivity)s, %(ts)s
    FROM recording WHERE enabled
    ON CONFLICT (namespace, thread_id, msg_id) DO NOTHING
    RETURNING id
), thread AS (
    INSERT INTO threads (namespace, thread_id, agent, metadata, turn_count, created_at, last_turn_at)
    SELECT %(namespace)s, %(thread_id)s, %(agent)s, '{}', 1, %(ts)s, %(ts)s FROM turn
    ON CONFLICT (namespace, thread_id)
    DO UPDATE SET turn_count = threads.turn_count + 1, last_turn_at = EXCLUDED.last_turn_at
), embedding AS (
    INSERT INTO embeddings (turn_id, namespace, thread_id, agent, msg_id, role, run_id, user_id, text,
                            digest, created_at)
    SELECT id, %(namespace)s, %(thread_id)s, %(agent)s, %(msg_id)s, %(role)s, %(run_id)s, %(user_id)s,
           %(embed_text)s, %(embed_digest)s, %(ts)s
    FROM turn WHERE %(embed)s
), run AS (
    INSERT INTO stage_runs (stage, subject, idem_key, status, attempts, created_at, updated_at,
                            available_at)
    SELECT %(stage)s, 'turn:' || id, 'embed:' || id || ':' || left(%(embed_digest)s, 16), 'pending', 0,
           %(ts)s, %(ts)s, %(ts)s
    FROM turn WHERE %(embed)s
    RETURNING id
)
SELECT (SELECT enabled FROM recording), (SELECT id FROM turn), (SELECT id FROM run)
"""

# The embedding stage's write, in the session that also closes the runs: a batch's vectors (text
# form, one per turn id) in one statement. A row is written only while its turn is not deleted and
# its digest is still the one the vector was built from, so a late vector is dropped; answers the
# turn ids that were written.
STORE_VECTORS = text("""
UPDATE embeddings e
SET vector = v.vector, model = :model, error = NULL, embedded_at = :now
FROM unnest(CAST(:turn_ids AS bigint[]), CAST(:digests AS text[]), CAST(:vectors AS vector[]))
     AS v(turn_id, digest, vector)
WHERE e.turn_id = v.turn_id AND e.digest = v.digest
  AND EXISTS (SELECT FROM turns t WHERE t.id = e.turn_id AND t.deleted_at IS NULL)
RETURNING e.turn_id
""")

# The re-embedding pass's pick: the succeeded embedding runs of turns whose stored vector another
# model made (the run's key spelled as APPEND_TURN spells it), at most :limit; ``workers.ledger.revive``
# then makes them pending again. Only succeeded runs: one the new model failed stays failed (for
# an operator's retry) instead of being revived every pass. The two ranges instead of "<>" let
# ix_embeddings_model (migration 0004) answer in an index probe when every vector is current.
OUTDATED_EMBEDDING_RUNS = text("""
SELECT r.id
FROM embeddings e
JOIN stage_runs r ON r.idem_key = 'embed:' || e.turn_id || ':' || left(e.digest, 16)
WHERE e.vector IS NOT NULL AND (e.model < :model OR e.model > :model)
  AND r.status = 'succeeded'
ORDER BY r.id
LIMIT :limit
""")
