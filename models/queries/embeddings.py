"""Named SQL of the embeddings family: the rows a turn's vector is built from and stored on."""

from sqlalchemy import text

from models.stages import EMBEDDING

# Before STORE_VECTORS, in its transaction: the saved turns its rows serve, locked, so that an
# unsave committing meanwhile is waited for and STORE_VECTORS (a statement of its own, with a
# snapshot taken after the lock) reads the flag it left. An unsaved turn is not locked: a save
# landing later flags the row itself. In id order, as the lock queue of two batches should be.
LOCK_SAVED_TURNS = text("""
SELECT t.id FROM turns t JOIN embeddings e ON e.turn_id = t.id
WHERE e.id = ANY(CAST(:ids AS bigint[])) AND t.is_saved
ORDER BY t.id
FOR SHARE OF t
""")

# The embedding stage's write, in the session that also closes the runs: a batch's vectors (text
# form, one per embedding row) in one statement. A row is written only while neither it nor the
# turn it serves is deleted and its digest is still the one the vector was built from, so a late
# vector is dropped; answers the rows that were written. A row whose turn a user saved while its
# vector was being made takes the turn's saved flag and owner with it.
STORE_VECTORS = text("""
UPDATE embeddings e
SET vector = v.vector, model = :model, error = NULL, embedded_at = :now,
    is_saved = e.is_saved OR t.is_saved, saved_at = coalesce(e.saved_at, t.saved_at),
    user_id = coalesce(t.user_id, e.user_id)
FROM unnest(CAST(:ids AS bigint[]), CAST(:digests AS text[]), CAST(:vectors AS vector[]))
     AS v(id, digest, vector), turns t
WHERE e.id = v.id AND e.digest = v.digest AND e.deleted_at IS NULL
  AND t.id = e.turn_id AND t.deleted_at IS NULL
RETURNING e.id
""")

# The re-embedding pass's pick: the succeeded embedding runs of live rows whose stored vector
# another model made (joined on the run's key), at most :limit;
# ``workers.ledger.revive`` then makes them pending again. Only succeeded runs: one the new model
# failed stays failed (for an operator's retry) instead of being revived every pass. The two
# ranges instead of "<>" let ix_embeddings_model (migration 0004) answer in an index probe when
# every vector is current.
OUTDATED_EMBEDDING_RUNS = text(f"""
SELECT r.id
FROM embeddings e
JOIN stage_runs r ON r.idem_key = loom_run_key('{EMBEDDING.name}', e.id, left(e.digest, 16))
WHERE e.vector IS NOT NULL AND (e.model < :model OR e.model > :model) AND e.deleted_at IS NULL
  AND r.status = 'succeeded'
ORDER BY r.id
LIMIT :limit
""")

# Settling a thread's embedding rows after turns were retired (pipelines.retire): every live row
# whose own copy is no longer live passes to an heir, another agent's live copy of the message that
# search indexes (a user or assistant turn, or a summary), that no row serves yet (a row serves one
# copy) and whose first :max_chars characters are the row's text; the row takes the heir's agent,
# role, run and user. With no heir it is tombstoned. A row of exactly :legacy_cut characters (an
# earlier build's cut) cannot be compared with a copy's text: it passes only to a copy whose first
# characters match those of the row's own turn, and is tombstoned when that turn is gone. One
# statement: ``orphaned`` is read once, so the rows that pass and the rows tombstoned are told apart
# from the same snapshot.
SETTLE_ROWS = text("""
WITH orphaned AS (
    SELECT e.id, e.namespace, e.thread_id, e.msg_id, e.text, e.turn_id
    FROM embeddings e
    WHERE e.namespace = :namespace AND e.thread_id = :thread_id AND e.deleted_at IS NULL
      AND NOT EXISTS (SELECT FROM turns t WHERE t.id = e.turn_id AND t.deleted_at IS NULL)
), heir AS (
    SELECT DISTINCT ON (o.id) o.id AS embedding_id, c.id AS turn_id, c.agent, c.role, c.run_id, c.user_id
    FROM orphaned o
    JOIN turns c ON c.namespace = o.namespace AND c.thread_id = o.thread_id AND c.msg_id = o.msg_id
    LEFT JOIN turns own ON own.id = o.turn_id
    WHERE c.deleted_at IS NULL AND c.sensitivity <> 'high'
      AND (c.role IN ('user', 'assistant') OR c.metadata ? 'compacted_from')
      AND NOT EXISTS (SELECT FROM embeddings x WHERE x.turn_id = c.id)  -- a row serves one copy
      AND CASE WHEN length(o.text) = :legacy_cut
               THEN left(c.content, :max_chars) = left(own.content, :max_chars)
               ELSE left(c.content, :max_chars) = o.text END
    ORDER BY o.id, c.id
), passed AS (
    UPDATE embeddings e
    SET turn_id = h.turn_id, agent = h.agent, role = h.role, run_id = h.run_id, user_id = h.user_id
    FROM heir h WHERE e.id = h.embedding_id
    RETURNING e.id
)
UPDATE embeddings e SET deleted_at = :now
FROM orphaned o
WHERE e.id = o.id AND o.id NOT IN (SELECT embedding_id FROM heir)
""")


# A turn that now reads as high loses its embedding rows, vectors with them (never kept), in the
# transaction that judged it: search stops serving it at once.
DELETE_OF_TURNS = text("DELETE FROM embeddings WHERE turn_id = ANY(:ids)")


# The width the embeddings.vector column was migrated with (NULL before the first migration): one
# column holds one width, so a model of another width is refused at start.
VECTOR_WIDTH = text(
    "SELECT atttypmod FROM pg_attribute WHERE attrelid = to_regclass('embeddings') AND attname = 'vector'"
)
