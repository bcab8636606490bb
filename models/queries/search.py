"""Named SQL of search: the planner settings conversation.search's legs read under
(``pipelines.search``), the statistics they read, and the lexical leg's BM25 (``pipelines.lexical``)
over the turns with their contexts (``pipelines.contexts``), which also ranks a user's saved
messages, a loom's memory threads and the evidence extraction read, each without a context.

The BM25 statements are templates (``models.queries.filled``): what they rank is one of the
``Documents`` below, and the scope they read is a condition on ``t`` joined with AND from the
fragments below. Values are bound parameters, never text of the statement."""

from dataclasses import dataclass

from sqlalchemy import text

# --- the vector leg ------------------------------------------------------------------------------

# The HNSW index of the turns' vectors, over half-precision copies (migration 0041): the vector leg
# orders by its expression (``pipelines.search``); the benchmarks rebuild it from its definition.
VECTOR_INDEX = "ix_embeddings_halfvec_hnsw"

# The scope is measured and scanned by one process: parallel workers cost more to start (~5 ms)
# than these reads take.
ONE_PROCESS = text("SET LOCAL max_parallel_workers_per_gather = 0")

# Iterative scans keep walking the graph until enough rows pass the filters (pgvector >= 0.8).
ITERATIVE_SCAN = text("SET LOCAL hnsw.iterative_scan = relaxed_order")

# The walk keeps :ef_search candidates (LOOM_CONVERSATION_SEARCH_EF_SEARCH). set_config, as SET
# LOCAL does, sets it for this transaction only and is checked against pgvector's range (1 to 1000);
# unlike SET it takes the number as a bound parameter.
EF_SEARCH = text("SELECT set_config('hnsw.ef_search', CAST(:ef_search AS text), true)")

# --- the substring fallback ----------------------------------------------------------------------

# Plan for this very term (or these words): a generic plan (psycopg prepares a statement run 5
# times, and PostgreSQL may then stop planning it per call) cannot tell a rare term, which the
# index finds in a millisecond, from a 2-character one, which it cannot serve at all and which
# then walks the whole index: 3.3 s against 1.0 s for a plain scan at 1,000,000 turns
# (bench/substring.py). The lexical leg's statements likewise (pipelines.lexical).
CUSTOM_PLANS = text("SET LOCAL plan_cache_mode = force_custom_plan")

# The predicate of the partial trigram index on turns.content (migration 0002), stated as literals:
# the planner uses a partial index only when it can prove the query implies the index's predicate,
# which it cannot from bound parameters (once a statement is prepared and planned generically).
# Keep it the same as the migration's.
SUBSTRING_INDEX_PREDICATE = text(
    "turns.role IN ('user', 'assistant') AND turns.deleted_at IS NULL AND turns.sensitivity <> 'high'"
)

# --- the lexical leg: what it ranks --------------------------------------------------------------


# What a context's word counts for beside one of the turn's own, in tf and in length: a little
# less, so a turn searched by its own text outranks the next turn, whose context holds that text
# too (bench/README.md: recall is the same as at 1 on both development sets). A constant of the
# documents' definition, written into their fragments as their column names are.
CONTEXT_WEIGHT = 0.9


@dataclass(frozen=True)
class Documents:
    """What the leg ranks: a table with ``lexemes`` and ``lexical_length`` (aliased ``t``), the
    condition of the documents it reads, and what one document is: a row, or (``unit``) the rows
    that share those columns, counted once, such as the agents' copies of one message. With
    ``context``, a row's ``context_lexemes`` and ``context_length`` (``pipelines.contexts``: the
    previous said turn's words) are part of its document."""

    table: str
    indexed: str
    unit: str | None = None
    id_column: str = "t.id"  # what a scored document's id is
    context: bool = False

    @property
    def words(self) -> str:
        """The query's lexemes (the statement's :lexemes) in the document, each with its positions
        (its tf): the turn's own marked with weight A, a context's with B. Only they are kept
        (``setweight`` marks the listed lexemes, ``ts_filter`` keeps the marked ones, both in C),
        so a document's other words are never unnested: scoring 1,834 turns of some 105 words
        took 350 ms unnested whole. Concatenated, a context's positions follow the turn's."""
        own = "ts_filter(setweight(t.lexemes, 'A', CAST(:lexemes AS text[])), '{a}')"
        if not self.context:
            return own
        context = "coalesce(t.context_lexemes, '')"
        return f"{own} || ts_filter(setweight({context}, 'B', CAST(:lexemes AS text[])), '{{b}}')"

    @property
    def tf(self) -> str:
        """A lexeme's tf in the document, a row of ``unnest(words)``: its positions, a context's
        counted CONTEXT_WEIGHT each."""
        if not self.context:
            return "cardinality(positions)"
        lighter = f"CAST({round(1 - CONTEXT_WEIGHT, 6)} AS float8)"
        return f"cardinality(positions) - {lighter} * cardinality(array_positions(weights, 'B'))"

    @property
    def length(self) -> str:
        """The document's words (BM25's dl), a context's counted CONTEXT_WEIGHT each."""
        if not self.context:
            return "t.lexical_length"
        return f"(t.lexical_length + CAST({CONTEXT_WEIGHT} AS float8) * t.context_length)"

    def holding(self, query: str) -> str:
        """The condition that a document holds the tsquery ``query``: each column's own, so that
        each index answers its part (a BitmapOr of the two)."""
        own = f"t.lexemes @@ {query}"
        return f"({own} OR t.context_lexemes @@ {query})" if self.context else own

    @property
    def counted(self) -> str:
        """The select list of a document frequency's rows (no DISTINCT for rows: its LIMIT stops
        early)."""
        return f"DISTINCT {self.unit}" if self.unit else "1"

    @property
    def number(self) -> str:
        return f"count(DISTINCT ({self.unit}))" if self.unit else "count(*)"


# The turns the leg reads, the live said turns and the compaction summaries that stand for the
# turns they replaced (``pipelines.compaction.COMPACTED_FROM``; other system and tool turns stay
# out): the predicate of their lexemes' index (ix_turns_namespace_lexemes, migration 0031), the
# same, so that the planner can prove it and read the index.
INDEXED_TURNS = (
    "(t.role IN ('user', 'assistant') OR (t.role = 'system' AND t.metadata ? 'compacted_from')) "
    "AND t.deleted_at IS NULL AND t.sensitivity <> 'high'"
)
# The indexed turns with their contexts (ix_turns_namespace_context, migration 0032: same predicate).
TURNS = Documents("turns", INDEXED_TURNS, context=True)
# A corpus of saved messages: no context, a user's saved message never carries another's words.
MESSAGES = Documents("turns", INDEXED_TURNS, unit="t.thread_id, t.msg_id")
# A loom's threads, but those cut (the predicate of ix_memory_threads_lexemes, migration 0018).
MEMORY_THREADS = Documents("memory_threads", "t.cut_at IS NULL", id_column="t.row_id")
MEMORY_EVIDENCE = Documents("memory_evidence", "t.sensitivity <> 'high'")  # what extraction read

# --- the lexical leg: its scopes, conditions on ``t`` ----------------------------------------------

# The turns of the search's namespaces: the corpus a conversation search is counted on.
IN_NAMESPACES = "t.namespace = ANY(:namespaces)"
# A turn's own column equal to the parameter of its name ({column}: thread_id, run_id or role).
COLUMN_IS = "t.{column} = :{column}"
# A search scoped to an agent finds the messages of which that agent holds a live copy.
HELD_BY_AGENT = (
    "EXISTS (SELECT FROM turns c WHERE c.namespace = t.namespace AND c.thread_id = t.thread_id "
    "AND c.msg_id = t.msg_id AND c.agent = :agent AND c.deleted_at IS NULL)"
)
# One user's saved messages; with IN_NAMESPACES, a corpus of their own (SAVED_CORPUS).
SAVED_BY = "t.is_saved AND t.user_id = :saved_by"
SAVED_CORPUS = f"{IN_NAMESPACES} AND {SAVED_BY}"
# A loom's threads not past their ``until``: both the scope and the corpus of a loom's search.
LIVE_IN_LOOM = "t.loom_id = :loom AND (t.until IS NULL OR t.until > :now)"
# A loom's evidence, memory.recall's corpus; its scope, said in a window and in a thread, adds to it
# those of SAID_SINCE, SAID_UNTIL and IN_THREAD that the request names.
IN_LOOM = "t.loom_id = :loom"
SAID_SINCE, SAID_UNTIL, IN_THREAD = " AND t.ts >= :since", " AND t.ts <= :until", " AND t.thread_id = :thread"

# --- the lexical leg: its statements -------------------------------------------------------------

# The query's lexemes as the documents' are made (``to_tsvector('english', ...)``, migration 0013):
# stemmed, without stop words.
QUERY_LEXEMES = text("SELECT lexeme FROM unnest(to_tsvector('english', :q))")

# N and avgdl of the indexed turns of :namespaces (TURNS, contexts counted), kept by the caller
# while THREAD_TURNS barely moves: counting them reads every one.
CORPUS = text(
    f"SELECT count(*), coalesce(avg({TURNS.length}), 1) FROM turns t "
    f"WHERE {IN_NAMESPACES} AND {TURNS.indexed}"
)

# The turns of :namespaces as their threads count them (every role, live ones): one row a thread,
# read for each query to tell whether CORPUS's figures still stand.
THREAD_TURNS = text("SELECT coalesce(sum(turn_count), 0) FROM threads WHERE namespace = ANY(:namespaces)")

# The most common lexemes of each month's partition of turns, as ANALYZE (autovacuum's too) keeps
# them: their share of the partition's turns, weighted by its size.
TABLE_SHARES = text(r"""
WITH parts AS (
    SELECT s.most_common_elems::text::text[] AS elems, s.most_common_elem_freqs AS freqs,
           greatest(c.reltuples, 0) AS turns
    FROM pg_stats s
    JOIN pg_class c ON c.relname = s.tablename
    JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = s.schemaname
    WHERE s.schemaname = current_schema() AND s.tablename LIKE 'turns\_p%' AND s.attname = 'lexemes'
      AND NOT s.inherited AND s.most_common_elems IS NOT NULL
)
SELECT e.lexeme, sum(e.share * p.turns) / nullif((SELECT sum(turns) FROM parts), 0)
FROM parts p, unnest(p.elems, p.freqs[1:cardinality(p.elems)]) AS e(lexeme, share)
GROUP BY e.lexeme
""")

# A template. Each of :lexemes' document frequency among the documents ({table} and {indexed} of a
# Documents, its {counted}, and {holding}: its condition that a document holds the lexeme ``l``)
# the corpus {within} admits, counted up to :exact only: past it, counting costs more than the
# exact figure is worth.
FREQUENCIES = """
SELECT l, (SELECT count(*) FROM (
              SELECT {counted} FROM {table} t
              WHERE {within} AND {indexed} AND {holding}
              LIMIT :exact) x)
FROM unnest(CAST(:lexemes AS text[])) l
"""
LEXEME = "quote_literal(l)::tsquery"  # FREQUENCIES' lexeme as a tsquery

# A template. N (a Documents' {number}) and avgdl (of its {length}) of a corpus of its own,
# {own_corpus}: small enough (a user's saved messages, a loom) to be counted for each query.
OWN_CORPUS = """
SELECT {number}, coalesce(avg({length}), 1) FROM {table} t WHERE {indexed} AND {own_corpus}
"""

# A template. The best :limit documents by BM25 (pipelines.lexical's formula, :k1 and :b) among
# those {scope} admits: the candidates are the documents holding one of the :bringing lexemes (one
# tsquery of them, QUERY, which the lexemes' indexes answer), and each is scored over all the
# query's :lexemes, weighted by their idf (:weights); ties go to the higher id. {id_column},
# {table}, {indexed}, {words}, {tf}, {length} and {holding} are a Documents'.
BM25 = """
WITH idf AS (SELECT * FROM unnest(CAST(:lexemes AS text[]), CAST(:weights AS float8[]))
             AS w(lexeme, w)),
q AS (SELECT string_agg(quote_literal(l), ' | ')::tsquery AS query
      FROM unnest(CAST(:bringing AS text[])) l)
SELECT {id_column} AS id, sum(
    idf.w * u.tf * (:k1 + 1) / (u.tf + :k1 * (1 - :b + :b * {length} / :avgdl))
) AS score
FROM {table} t, q,
     LATERAL (SELECT lexeme, {tf} AS tf FROM unnest({words})) u
     JOIN idf ON idf.lexeme = u.lexeme
WHERE {holding} AND {indexed} AND {scope}
GROUP BY 1
ORDER BY score DESC, 1 DESC
LIMIT :limit
"""
QUERY = "q.query"  # BM25's tsquery of the bringing lexemes
