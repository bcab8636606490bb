"""Named SQL of erasure: the erasure log's ids, the export's read, and the batches an erasure run
takes (``pipelines.erasure`` runs them in order). Each batch statement takes at most :n rows of
what its scope still holds and answers how many it took, so a run finds its next batch by what is
left.

By a person: :namespace and :user_id. By whole namespaces: :namespaces, each table's batch one of
two templates (``models.queries.filled``), filled here with the tables below: ``{table}`` a table
of rows namespaced by a ``namespace`` column, ``{key}`` the columns a row is found by."""

from sqlalchemy import text

from models.queries import filled

# The request's own id is its erasure id, and every later event of it carries the same: drawn
# before its ``requested`` row is added.
NEXT_ERASURE_ID = text("SELECT nextval(pg_get_serial_sequence('erasure_log', 'id'))")

# erasure.export's read of a person's turns, tombstoned ones too with :tombstoned, in the order they
# were said: through a server-side cursor of psycopg's own connection (a few hundred rows a round
# trip, however many the person said), hence psycopg's placeholders.
EXPORT_TURNS = """
SELECT thread_id, msg_id, agent, role, name, content, reasoning, user_id, run_id, metadata, tokens, ts,
       deleted_at
FROM turns
WHERE namespace = %(namespace)s AND user_id = %(user_id)s AND (%(tombstoned)s OR deleted_at IS NULL)
ORDER BY ts, id
"""

# --- a person's data in a namespace --------------------------------------------------------------

# Proposals extraction made from the threads the person spoke in, or naming them, may quote them.
CLEAR_THEIR_PROPOSALS = text("""
WITH chosen AS (
    SELECT ls.id FROM loom_sessions ls
    WHERE ls.namespace = :namespace AND ls.pending_proposals <> '[]'::jsonb AND (
        EXISTS (SELECT FROM turns t WHERE t.namespace = ls.namespace AND t.thread_id = ls.thread_id
                  AND t.user_id = :user_id)
        OR EXISTS (SELECT FROM memory_evidence e WHERE e.loom_id = ls.loom_id
                     AND e.thread_id = ls.thread_id AND e.user_id = :user_id)
        OR EXISTS (SELECT FROM jsonb_array_elements(ls.pending_proposals) p
                     WHERE p -> 'subjects' ? :user_id))
    LIMIT :n FOR UPDATE
), gone AS (
    UPDATE loom_sessions l SET pending_proposals = '[]'::jsonb, date_updated = :now
    FROM chosen c WHERE l.id = c.id RETURNING 1
)
SELECT count(*) FROM gone
""")

# Sessions forget them as a subject.
FORGET_THEM_AS_SUBJECT = text("""
WITH gone AS (
    UPDATE loom_sessions SET subjects = array_remove(subjects, :user_id), date_updated = :now
    WHERE id IN (SELECT id FROM loom_sessions
                 WHERE namespace = :namespace AND :user_id = ANY(subjects) LIMIT :n)
    RETURNING 1
)
SELECT count(*) FROM gone
""")

# The briefs a token bounded to them stored, revisions too: under their user's prefix
# (``pipelines.briefs.bounds_prefix``), which also starts their sessions' prefixes.
DELETE_THEIR_BRIEFS = text("""
WITH gone AS (
    DELETE FROM session_briefs WHERE id IN (
        SELECT id FROM session_briefs
        WHERE namespace = :namespace AND starts_with(brief_key, :prefix) LIMIT :n)
    RETURNING 1
)
SELECT count(*) FROM gone
""")

# A batch of the rows a person owns in a table ({owner} their column, {key} a row's), deleted.
DELETE_THEIRS = """
WITH gone AS (
    DELETE FROM {table} WHERE {key} IN (
        SELECT {key} FROM {table} WHERE namespace = :namespace AND {owner} = :user_id LIMIT :n)
    RETURNING 1
)
SELECT count(*) FROM gone
"""
# The tool actions recorded for them (their evidence goes with DELETE_THEIR_EVIDENCE).
DELETE_THEIR_OBSERVATIONS = filled(DELETE_THEIRS, table="observations", key="id", owner="user_id")
# Their working memory blocks, with every revision.
DELETE_THEIR_WORKING_MEMORY = filled(DELETE_THEIRS, table="working_memory", key="id", owner="user_id")
# The coding-session threads they own (their turns go with the person's turns, TOMBSTONE_THEIR_TURNS).
DELETE_THEIR_CODING_THREADS = filled(DELETE_THEIRS, table="coding_threads", key="row_id", owner="owner")

# The memory threads of a person: those citing evidence of their messages, and those about them.
# Locked: their tapestries' lines go in the same transaction (``pipelines.erasure``), then
# DELETE_MEMORY_THREADS.
THEIR_MEMORY_THREADS = text("""
SELECT m.id FROM memory_threads m
WHERE m.namespace = :namespace AND (:user_id = ANY(m.subjects) OR EXISTS (
    SELECT FROM memory_evidence e WHERE e.id = ANY(m.evidence_ids) AND e.user_id = :user_id))
LIMIT :n FOR UPDATE
""")
DELETE_MEMORY_THREADS = text("DELETE FROM memory_threads WHERE id = ANY(:ids)")

DELETE_THEIR_EVIDENCE = text("""
WITH gone AS (
    DELETE FROM memory_evidence WHERE id IN (
        SELECT id FROM memory_evidence WHERE namespace = :namespace AND user_id = :user_id LIMIT :n)
    RETURNING 1
)
SELECT count(*) FROM gone
""")

# A compaction summary of the person's words paraphrases them: it goes with them (and its row).
TOMBSTONE_SUMMARIES_OF_THEM = text("""
WITH chosen AS (
    SELECT s.id, s.ts FROM turns s
    WHERE s.namespace = :namespace AND s.deleted_at IS NULL AND s.metadata ? 'compacted_from'
      AND EXISTS (
          SELECT FROM turns u
          WHERE u.namespace = s.namespace AND u.thread_id = s.thread_id AND u.user_id = :user_id
            AND s.metadata -> 'compacted_from' ? u.msg_id)
    LIMIT :n FOR UPDATE OF s
), gone AS (
    UPDATE turns t SET deleted_at = :now FROM chosen c WHERE t.id = c.id AND t.ts = c.ts
    RETURNING t.id
), rows AS (
    UPDATE embeddings SET deleted_at = :now
    WHERE turn_id IN (SELECT id FROM gone) AND deleted_at IS NULL
)
SELECT count(*) FROM gone
""")

# The threads of their next batch of turns, which the caller locks before TOMBSTONE_THEIR_TURNS
# takes the batch from them (a thread's row before its turns, as a delete locks them).
THREADS_OF_THEIR_TURNS = text("""
SELECT DISTINCT thread_id FROM (
    SELECT thread_id FROM turns
    WHERE namespace = :namespace AND user_id = :user_id AND deleted_at IS NULL
    LIMIT :n) batch
""")

# Their turns in :thread_ids; the threads they spoke in lose their title (it may quote them: the
# titler makes a new one from what is left) and count the turns tombstoned no more. Answers how
# many, and those threads (whose turns' contexts the caller rebuilds: they may hold their words).
TOMBSTONE_THEIR_TURNS = text("""
WITH chosen AS (
    SELECT id, ts FROM turns
    WHERE namespace = :namespace AND user_id = :user_id AND deleted_at IS NULL
      AND thread_id = ANY(:thread_ids)
    LIMIT :n FOR UPDATE
), gone AS (
    UPDATE turns t SET deleted_at = :now FROM chosen c WHERE t.id = c.id AND t.ts = c.ts
    RETURNING t.namespace, t.thread_id
), threads AS (
    UPDATE threads t SET title = NULL, turn_count = greatest(t.turn_count - g.n, 0)
    FROM (SELECT namespace, thread_id, count(*) AS n FROM gone GROUP BY 1, 2) g
    WHERE t.namespace = g.namespace AND t.thread_id = g.thread_id
)
SELECT count(*), coalesce(array_agg(DISTINCT thread_id), '{}') FROM gone
""")

TOMBSTONE_THEIR_EMBEDDINGS = text("""
WITH gone AS (
    UPDATE embeddings SET deleted_at = :now WHERE id IN (
        SELECT id FROM embeddings
        WHERE namespace = :namespace AND user_id = :user_id AND deleted_at IS NULL LIMIT :n)
    RETURNING id
)
SELECT count(*) FROM gone
""")

# --- whole namespaces ----------------------------------------------------------------------------

# A batch of the table's live rows tombstoned (a tombstone keeps the row, for the export).
TOMBSTONE_IN_NAMESPACES = """
WITH gone AS (
    UPDATE {table} SET deleted_at = :now WHERE ({key}) IN (
        SELECT {key} FROM {table} WHERE namespace = ANY(:namespaces) AND deleted_at IS NULL LIMIT :n)
    RETURNING 1
)
SELECT count(*) FROM gone
"""

# A batch of the table's rows deleted from disk, tombstoned ones too.
DELETE_IN_NAMESPACES = """
WITH gone AS (
    DELETE FROM {table} WHERE ({key}) IN (
        SELECT {key} FROM {table} WHERE namespace = ANY(:namespaces) LIMIT :n)
    RETURNING 1
)
SELECT count(*) FROM gone
"""

# The tables that keep tombstones, and those whose rows go from disk, by the key a row is found by
# (a turn by its id and ts, the key of its partitions).
TOMBSTONED = {
    table: filled(TOMBSTONE_IN_NAMESPACES, table=table, key=key)
    for table, key in (("threads", "id"), ("turns", "id, ts"), ("embeddings", "id"))
}
DELETED = {
    table: filled(DELETE_IN_NAMESPACES, table=table, key=key)
    for table, key in (
        ("threads", "id"),
        ("embeddings", "id"),
        ("transcripts", "id"),
        ("loom_sessions", "id"),
        ("memory_threads", "id"),
        ("memory_evidence", "id"),
        ("looms", "id"),
        ("session_briefs", "id"),  # with their revisions, saves and windows
        ("coding_threads", "row_id"),
        ("working_memory", "id"),  # with its revisions
        ("observations", "id"),
    )
}

# Turns removed from disk, each with its key, in one statement.
PURGE_TURNS = text("""
WITH gone AS (
    DELETE FROM turns WHERE (id, ts) IN (
        SELECT id, ts FROM turns WHERE namespace = ANY(:namespaces) LIMIT :n)
    RETURNING id, namespace, thread_id, agent, msg_id
), keys AS (
    DELETE FROM turn_keys k USING gone g
    WHERE k.namespace = g.namespace AND k.thread_id = g.thread_id AND k.agent = g.agent
      AND k.msg_id = g.msg_id AND k.turn_id = g.id
)
SELECT count(*) FROM gone
""")

# A reflection run keeps its question and the model's prose (params, result): it goes with any
# memory thread it drew on, and with its loom.
DELETE_REFLECTIONS_CITING = text("""
DELETE FROM stage_runs WHERE stage = 'reflection' AND params -> 'threads' ?| CAST(:ids AS text[])
""")
DELETE_REFLECTIONS_IN_NAMESPACES = text("""
WITH gone AS (
    DELETE FROM stage_runs WHERE id IN (
        SELECT r.id FROM stage_runs r JOIN looms l ON l.id::text = r.params ->> 'loom_id'
        WHERE r.stage = 'reflection' AND l.namespace = ANY(:namespaces) LIMIT :n)
    RETURNING 1
)
SELECT count(*) FROM gone
""")

# A loom's night weavings go with it (they have no namespace of their own: their loom's).
DELETE_NIGHT_WEAVINGS = text("""
WITH gone AS (
    DELETE FROM night_weavings WHERE id IN (
        SELECT w.id FROM night_weavings w
        JOIN looms l ON l.id = w.loom_id WHERE l.namespace = ANY(:namespaces) LIMIT :n)
    RETURNING 1
)
SELECT count(*) FROM gone
""")
