"""Named SQL of the stage ledger (``stage_runs``) and what reads it whole: the status snapshot."""

from psycopg import sql
from sqlalchemy import text

# A batch's counts added to a run's ``result`` in the batch's own transaction, so a run killed
# midway and finished by the next delivery still reports the whole: each key summed as bigint.
ADD_TO_RESULT = text("""
UPDATE stage_runs
SET result = coalesce(result, '{}'::jsonb) || (
    SELECT coalesce(jsonb_object_agg(key, coalesce((result ->> key)::bigint, 0) + value::bigint), '{}')
    FROM jsonb_each_text(CAST(:counts AS jsonb))
)
WHERE id = :id
""")

# Bounds the probe's statements that follow, in its transaction (answering it is what "up" means).
STATEMENT_TIMEOUT = text("SELECT set_config('statement_timeout', :ms, true)")

# The status snapshot, one round trip: the ledger by stage and status (an index-only scan of
# ix_stage_runs_status_stage), the oldest pending run's age per stage (an index scan of the pending
# runs only, same index), and the turns embedded within each window (60 and 300 seconds, as
# ops.status.THROUGHPUT_WINDOWS spells them). The age is taken from available_at (when the run
# could first be claimed: its append, its retry, the end of its backoff), not updated_at, which the
# sweep touches whenever it re-sends a run and which would hide a queue that nobody drains.
# `embedded_at` has no index, so the last part scans `embeddings`: cheap for a small Loom, worth a
# (BRIN) index on embeddings.embedded_at before a large one is scraped every few seconds.
SNAPSHOT = text("""
SELECT
    (SELECT coalesce(json_agg(json_build_array(stage, status, n)), '[]')
     FROM (SELECT stage, status, count(*) AS n FROM stage_runs GROUP BY stage, status) AS c),
    (SELECT coalesce(json_object_agg(stage, age), '{}')
     FROM (SELECT stage, greatest(extract(epoch FROM now() - min(available_at)), 0) AS age
           FROM stage_runs WHERE status = 'pending' GROUP BY stage) AS p),
    (SELECT json_build_array(
                count(*) FILTER (WHERE embedded_at > now() - interval '60 seconds'), count(*))
     FROM embeddings WHERE embedded_at > now() - interval '300 seconds')
""")


# A connection's subscription to a NOTIFY channel ({channel}, an identifier): stage runs that end
# notify loom_run_done (migration 0029), which the API's waits listen on.
LISTEN = sql.SQL("LISTEN {channel}")
