"""What was made from turns before a re-screening judged them high (``pipelines.derived``). Each
statement takes the turns as parallel arrays (:namespaces, :threads, :agents, :msg_ids) and answers
the ids of the rows it changed."""

from sqlalchemy import text

from models.queries import runs_of
from models.stages import TITLING

_TURNS = """unnest(CAST(:namespaces AS text[]), CAST(:threads AS text[]), CAST(:agents AS text[]),
                  CAST(:msg_ids AS text[])) AS k(namespace, thread_id, agent, msg_id)"""

# The compaction summaries that name one of the turns among those they replace.
SUMMARIES_HIGH = text(f"""
UPDATE turns t SET sensitivity = 'high'
FROM {_TURNS}
WHERE t.namespace = k.namespace AND t.thread_id = k.thread_id AND t.role = 'system'
  AND t.metadata -> 'compacted_from' ? k.msg_id AND t.sensitivity <> 'high'
RETURNING t.id
""")

# The evidence copies an extraction kept of the turns.
EVIDENCE_HIGH = text(f"""
UPDATE memory_evidence e SET sensitivity = 'high'
FROM {_TURNS}
WHERE e.namespace = k.namespace AND e.thread_id = k.thread_id AND e.agent = k.agent
  AND e.msg_id = k.msg_id AND e.sensitivity <> 'high'
RETURNING e.id
""")

# The memory threads that cite that evidence.
CUT_CITING = text("""
UPDATE memory_threads SET cut_at = :now, updated_at = :now
WHERE evidence_ids && CAST(:evidence AS bigint[]) AND cut_at IS NULL
RETURNING row_id
""")

# The titles the titler made for the turns' threads (a title a client set has no title run).
TITLES_CLEARED = text(f"""
UPDATE threads th SET title = NULL
FROM (SELECT DISTINCT namespace, thread_id FROM {_TURNS}) AS k
WHERE th.namespace = k.namespace AND th.thread_id = k.thread_id AND th.title IS NOT NULL
  AND EXISTS (SELECT FROM stage_runs r
              WHERE {runs_of(TITLING, "th.id")} AND r.status = 'succeeded')
RETURNING th.id
""")
