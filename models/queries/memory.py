"""Named SQL of the memory plane: memory threads, their evidence, looms and their sessions."""

from sqlalchemy import text

from models.queries import runs_of
from models.stages import MEMORY_EMBEDDING, NIGHT_WEAVING

# The re-embedding pass's pick for memory threads (as OUTDATED_EMBEDDING_RUNS does for turns: a run
# keyed by the thread's row_id and digest), over
# ix_memory_threads_model (migration 0020).
OUTDATED_MEMORY_EMBEDDING_RUNS = text(f"""
SELECT r.id
FROM memory_threads m
JOIN stage_runs r ON r.idem_key = loom_run_key('{MEMORY_EMBEDDING.name}', m.row_id, left(m.digest, 16))
WHERE m.vector IS NOT NULL AND (m.model < :model OR m.model > :model) AND m.cut_at IS NULL
  AND r.status = 'succeeded'
ORDER BY r.id
LIMIT :limit
""")

# A memory thread's number is drawn before its row is added: the ORM would send the column's empty
# value, not take its default.
NEXT_THREAD_ROW_ID = text("SELECT nextval(pg_get_serial_sequence('memory_threads', 'row_id'))")

# The memory embedding stage's write, as embeddings.STORE_VECTORS is the turns': a batch's vectors
# (text form, one per thread) in one statement, each written only while its thread is not cut and
# its digest is still the one the vector was made from (a thread reframed meanwhile waits for its
# own run); answers the threads written.
STORE_THREAD_VECTORS = text("""
UPDATE memory_threads m
SET vector = v.vector, model = :model, embed_error = NULL, embedded_at = :now
FROM unnest(CAST(:ids AS bigint[]), CAST(:digests AS text[]), CAST(:vectors AS vector[]))
     AS v(row_id, digest, vector)
WHERE m.row_id = v.row_id AND m.digest = v.digest AND m.cut_at IS NULL
RETURNING m.row_id
""")

# Fail-open, as for a turn: the threads an embedding call failed for keep its error, which says why
# they have no vector (the next success clears it).
RECORD_THREAD_EMBED_ERROR = text("UPDATE memory_threads SET embed_error = :error WHERE row_id = ANY(:ids)")

# memory.suggest's similarity of each candidate thread (found by words, by a cue or by the vector
# leg) to what was just said, computed for these ids only and only against vectors the same model
# made (another model's live in another space).
THREAD_SIMILARITIES = text("""
SELECT id, 1 - (vector <=> CAST(:vector AS vector)) FROM memory_threads
WHERE id = ANY(:ids) AND vector IS NOT NULL AND model = :model
""")

# The furthest point of the agent's turns of this run on the thread: where a session opened late
# starts from (night weaving still reads it from the beginning). A turn with no run belongs to its
# thread's interaction, hence the coalesce on both sides.
LAST_SEQUENCE = text("""
SELECT coalesce(max(seq), 0), max(ts) FROM turns
WHERE namespace = :ns AND thread_id = :thread AND agent = :agent
  AND coalesce(run_id, '') = coalesce(:run, '') AND deleted_at IS NULL
""")

# context.pack's subjects: the users who sent messages in the thread, at most 32 (as many as a
# request may name), in a stable order.
SENDERS = text("""
SELECT DISTINCT user_id FROM turns
WHERE namespace = :ns AND thread_id = :thread AND user_id IS NOT NULL AND deleted_at IS NULL
ORDER BY user_id LIMIT 32
""")

# Keeping messages as evidence, a batch in one statement (parallel arrays unnested), screened by the
# caller. A message this loom kept before (same thread and msg_id) stays as it was: the no-op update
# is there so that RETURNING answers its id too.
KEEP_EVIDENCE = text("""
INSERT INTO memory_evidence (loom_id, namespace, thread_id, msg_id, agent, role, content, user_id, run_id,
                             ts, sensitivity, created_at)
SELECT :loom, :ns, :thread, m.msg_id, :agent, m.role, m.content, m.user_id, :run, m.ts, m.sensitivity, :now
FROM unnest(CAST(:msg_ids AS text[]), CAST(:roles AS text[]), CAST(:contents AS text[]),
            CAST(:users AS text[]), CAST(:ts AS timestamptz[]), CAST(:sensitivities AS text[]))
     AS m(msg_id, role, content, user_id, ts, sensitivity)
ON CONFLICT (loom_id, thread_id, msg_id) DO UPDATE SET msg_id = EXCLUDED.msg_id  -- kept as it was
RETURNING id
""")

# Night weaving's read: the session's turns after what was consolidated (:after) up to :up_to, at
# most :limit, the user's and the agent's only, in the order they were said. Scoped as LAST_SEQUENCE.
NEW_TURNS = text("""
SELECT seq, msg_id, role, content, user_id, ts, sensitivity FROM turns
WHERE namespace = :ns AND thread_id = :thread AND agent = :agent AND coalesce(run_id, '') = coalesce(:run, '')
  AND seq > :after AND seq <= :up_to AND deleted_at IS NULL AND role IN ('user', 'assistant')
ORDER BY seq
LIMIT :limit
""")

# Night weaving's judgement in one statement: the used threads reinforced by :step (to at most
# :max), the unused decayed by :factor (to at least :min).
# Each row's weight before and after, for the night's record of what it changed (locked first:
# the before is the weight this update replaced).
REWEIGH = text("""
WITH before AS (
    SELECT id, weight FROM memory_threads WHERE id = ANY(:used) OR id = ANY(:unused) FOR UPDATE
)
UPDATE memory_threads m
SET weight = CASE WHEN m.id = ANY(:used) THEN least(m.weight + :step, :max)
                  ELSE greatest(m.weight * :factor, :min) END,
    updated_at = :now
FROM before WHERE m.id = before.id
RETURNING m.id, before.weight, m.weight
""")


# What nights changed for these sessions of a loom: each succeeded night run's record (the
# episodes it wrote, each judged thread's weight before and after), oldest first.
NIGHT_CHANGES = text(f"""
SELECT ls.id AS session_id, CAST(r.params->>'night_weaving_id' AS uuid) AS night_id, r.finished_at, r.result
FROM loom_sessions ls
JOIN stage_runs r ON {runs_of(NIGHT_WEAVING, "ls.row_id")}
WHERE ls.loom_id = :loom AND ls.id = ANY(:sessions) AND r.status = 'succeeded'
ORDER BY r.finished_at, r.id
""")


# A night weaving's runs still open besides the one closing (:me): the last to close finishes the
# weaving. Read under the weaving's row lock, so of two closing at once the later sees the other.
OPEN_NIGHT_RUNS = text(f"""
SELECT count(*) FROM stage_runs
WHERE stage = '{NIGHT_WEAVING.name}' AND params->>'night_weaving_id' = :id
  AND status IN ('pending', 'running') AND id <> :me
""")


# A reflection's close neighbours (``pipelines.reflecting``): the loom's threads, not cut, sharing a
# subject (case folded), a cue or an evidence id with the cited ones (:ids), heaviest and newest
# first. Those past their until are read too: the caller names them as expired tensions.
NEIGHBOURS = text("""
SELECT id FROM memory_threads
WHERE loom_id = :loom AND cut_at IS NULL AND NOT (id = ANY(CAST(:ids AS uuid[])))
  AND (EXISTS (SELECT 1 FROM unnest(subjects) AS s(v) WHERE lower(s.v) = ANY(CAST(:subjects AS text[])))
       OR cues && CAST(:cues AS text[]) OR evidence_ids && CAST(:evidence AS bigint[]))
ORDER BY weight DESC, created_at DESC, id
LIMIT :limit
""")
