"""Hand-written SQL, kept as named queries. Each is used where one statement does what several ORM
round trips would, on a path measured in bench/."""

from sqlalchemy import text

# conversation.append's write, after the turn id was drawn from its sequence: the turn (unless
# (namespace, thread_id, msg_id) is already there), its thread created or counted, and, when the
# turn is to be embedded, its embedding row and the pending stage run: one round trip, one
# transaction. Every part but the turn selects FROM turn, so a duplicate writes nothing at all.
APPEND_TURN = text("""
WITH turn AS (
    INSERT INTO turns (id, namespace, thread_id, agent, msg_id, role, content, reasoning, user_id,
                       run_id, metadata, tokens, sensitivity, ts)
    VALUES (:turn_id, :namespace, :thread_id, :agent, :msg_id, :role, :content, :reasoning, :user_id,
            :run_id, CAST(:metadata AS jsonb), :tokens, :sensitivity, :ts)
    ON CONFLICT (namespace, thread_id, msg_id) DO NOTHING
    RETURNING id
), thread AS (
    INSERT INTO threads (namespace, thread_id, agent, metadata, turn_count, created_at, last_turn_at)
    SELECT :namespace, :thread_id, :agent, '{}', 1, :ts, :ts FROM turn
    ON CONFLICT (namespace, thread_id)
    DO UPDATE SET turn_count = threads.turn_count + 1, last_turn_at = EXCLUDED.last_turn_at
), embedding AS (
    INSERT INTO embeddings (turn_id, namespace, thread_id, agent, msg_id, role, run_id, user_id, text,
                            digest, created_at)
    SELECT id, :namespace, :thread_id, :agent, :msg_id, :role, :run_id, :user_id, :embed_text,
           :embed_digest, :ts
    FROM turn WHERE :embed
), run AS (
    INSERT INTO stage_runs (stage, subject, idem_key, status, attempts, created_at, updated_at)
    SELECT :stage, :subject, :idem_key, 'pending', 0, :ts, :ts FROM turn WHERE :embed
    RETURNING id
)
SELECT (SELECT id FROM turn) AS turn_id, (SELECT id FROM run) AS run_id
""")

# The namespace's recording switch and a fresh turn id, in one round trip.
RECORDING_AND_TURN_ID = text("""
SELECT coalesce((SELECT conversation_logging_enabled FROM namespaces WHERE name = :namespace), false),
       nextval(pg_get_serial_sequence('turns', 'id'))
""")
