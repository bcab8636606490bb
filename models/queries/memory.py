"""Named SQL of the memory plane: memory threads, their evidence, looms and their sessions."""

from sqlalchemy import text

# The re-embedding pass's pick for memory threads (as OUTDATED_EMBEDDING_RUNS does for turns: a run
# keyed by the thread's row_id and digest), over
# ix_memory_threads_model (migration 0020).
OUTDATED_MEMORY_EMBEDDING_RUNS = text("""
SELECT r.id
FROM memory_threads m
JOIN stage_runs r ON r.idem_key = loom_run_key('memory_embedding', m.row_id, left(m.digest, 16))
WHERE m.vector IS NOT NULL AND (m.model < :model OR m.model > :model) AND m.cut_at IS NULL
  AND r.status = 'succeeded'
ORDER BY r.id
LIMIT :limit
""")
