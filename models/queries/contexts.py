"""Named SQL of the turns' lexical contexts (``pipelines.contexts``): a said turn's context is the
words of the previous said turn of its thread, when that turn is short, and the lexical leg counts
them as the turn's own (``models.queries.search.TURNS``).

A said turn is a live user or assistant turn that does not read as high. Turns are in the thread's
order, ``coalesce(seq, 0), ts, id`` (``seq`` is the arrival order, none before migration 0018); the
agents' copies of one message that follow one another are one run, and a run's context is the
words of the run before it (its first copy's): a copy never takes its own message as context. The
append (``models.queries.turns.APPEND_TURN``) keeps the same in one statement from the thread row's
``said_*`` columns; REBUILD recomputes it from the turns, for the threads a hidden turn left."""

from sqlalchemy import text

# The threads (:namespaces and :thread_ids, pairs) locked in id order before REBUILD, in a statement
# of its own: an append waits, and one that committed meanwhile is in REBUILD's snapshot.
LOCK_THREADS = text("""
SELECT th.id FROM threads th
JOIN unnest(CAST(:namespaces AS text[]), CAST(:thread_ids AS text[])) AS x(namespace, thread_id)
  ON th.namespace = x.namespace AND th.thread_id = x.thread_id
ORDER BY th.id
FOR UPDATE OF th
""")

# The contexts of the threads' said turns recomputed, written only where they changed, and each
# thread's ``said_*`` set from its last run (NULL with none). A turn said before :expired_before
# (the retention TTL's cutoff, or NULL) is no one's context: it is expired, if not removed yet.
# ``words`` is a turn's lexemes when it has at most :short characters (its generated ``lexemes``,
# read only then: a long turn's are not detoasted), else empty; a context is never empty but NULL.
# Its length in bytes comes from the TOAST header, so a long text is not read either.
# Answers how many turns were written.
REBUILD = text("""
WITH chosen AS (
    SELECT DISTINCT namespace, thread_id
    FROM unnest(CAST(:namespaces AS text[]), CAST(:thread_ids AS text[])) AS x(namespace, thread_id)
), said AS (
    SELECT t.id, t.ts, t.namespace, t.thread_id, t.msg_id,
           CASE WHEN octet_length(t.content) > 4 * :short THEN ''::tsvector
                WHEN char_length(t.content) > :short THEN ''::tsvector
                ELSE t.lexemes END AS words,
           lag(t.msg_id) OVER w IS DISTINCT FROM t.msg_id AS starts,
           row_number() OVER w AS place
    FROM chosen c
    JOIN turns t ON t.namespace = c.namespace AND t.thread_id = c.thread_id
    WHERE t.role IN ('user', 'assistant') AND t.deleted_at IS NULL AND t.sensitivity <> 'high'
      AND (CAST(:expired_before AS timestamptz) IS NULL OR t.ts >= CAST(:expired_before AS timestamptz))
    WINDOW w AS (PARTITION BY t.namespace, t.thread_id ORDER BY coalesce(t.seq, 0), t.ts, t.id)
), runs AS (
    SELECT *, count(*) FILTER (WHERE starts) OVER (PARTITION BY namespace, thread_id ORDER BY place) AS run
    FROM said
), heads AS (
    SELECT namespace, thread_id, run, msg_id, words,
           nullif(lag(words) OVER (PARTITION BY namespace, thread_id ORDER BY run), ''::tsvector) AS context
    FROM runs WHERE starts
), built AS (
    SELECT r.id, r.ts, h.context, coalesce(loom_word_count(h.context), 0) AS length
    FROM runs r JOIN heads h ON h.namespace = r.namespace AND h.thread_id = r.thread_id AND h.run = r.run
), written AS (
    UPDATE turns t SET context_lexemes = b.context, context_length = b.length
    FROM built b
    WHERE t.id = b.id AND t.ts = b.ts
      AND (t.context_lexemes IS DISTINCT FROM b.context OR t.context_length <> b.length)
    RETURNING 1
), last AS (
    SELECT c.namespace, c.thread_id, h.msg_id, h.words, h.context
    FROM chosen c
    LEFT JOIN (SELECT DISTINCT ON (namespace, thread_id) * FROM heads
               ORDER BY namespace, thread_id, run DESC) h
      ON h.namespace = c.namespace AND h.thread_id = c.thread_id
), moved AS (
    UPDATE threads th SET said_msg_id = l.msg_id, said_lexemes = l.words, said_context = l.context
    FROM last l
    WHERE th.namespace = l.namespace AND th.thread_id = l.thread_id
      AND (th.said_msg_id, th.said_lexemes, th.said_context) IS DISTINCT FROM (l.msg_id, l.words, l.context)
)
SELECT count(*) FROM written
""")

# A template. The threads holding live said turns in one month's partition of turns ({partition},
# quoted), in order: what the contexts stage rebuilds for a month, and retention before the month
# is detached.
THREADS_OF_MONTH = """
SELECT DISTINCT namespace, thread_id FROM {partition}
WHERE role IN ('user', 'assistant') AND deleted_at IS NULL AND sensitivity <> 'high'
ORDER BY namespace, thread_id
"""
