"""The cues' index: memory.suggest finds the threads whose cue was said by an index, not a scan

A cue's key is its words (lower case, split on what is not a word character; the first 8 of a
longer cue); ``loom_said_keys`` is every run of 1 to 8 consecutive words of a text, so the threads
a text may have said a cue of are those whose keys overlap its runs, read from a GIN index. The
caller then checks the cue whole (``pipelines.suggesting``): the index only narrows. A text's
many runs make the planner expect most threads to match; the keys' function is costed as what it
is (a scan evaluates it on every thread: 180 ms at 10,000 threads), so the index is read instead;
the index has no pending list (fastupdate off): a search compares a text's hundreds of runs
with every thread written since the last vacuum there (140 ms after 10,000 writes); and a query
that takes a text's keys is never run in parallel (``loom_said_keys`` is marked so): it reads a
handful of rows, and the costed keys made the planner start a worker for them (5 ms of 7).

Revision ID: 0038
"""

from alembic import op

revision = "0038"
down_revision = "0037"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
        CREATE FUNCTION loom_words(text) RETURNS text[]
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
        RETURN array_remove(regexp_split_to_array(lower($1), '\\W+'), '')
    """)
    op.execute("""
        CREATE FUNCTION loom_cue_keys(cues text[]) RETURNS text[]
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE COST 10000
        RETURN ARRAY(
            SELECT array_to_string((loom_words(cue))[1:8], ' ')
            FROM unnest(cues) AS cue
            WHERE cardinality(loom_words(cue)) > 0
        )
    """)
    op.execute("""
        CREATE FUNCTION loom_said_keys(said text) RETURNS text[]
        LANGUAGE sql IMMUTABLE STRICT PARALLEL UNSAFE
        RETURN ARRAY(
            SELECT DISTINCT array_to_string(w[i:i + n - 1], ' ')
            FROM (SELECT loom_words(said) AS w) AS words,
                 generate_series(1, cardinality(w)) AS i,
                 generate_series(1, 8) AS n
            WHERE i + n - 1 <= cardinality(w)
        )
    """)
    op.execute(
        "CREATE INDEX ix_memory_threads_cue_keys ON memory_threads USING gin (loom_cue_keys(cues)) "
        "WITH (fastupdate = off) WHERE cut_at IS NULL"
    )


def downgrade() -> None:
    op.execute("DROP INDEX ix_memory_threads_cue_keys")
    op.execute("DROP FUNCTION loom_said_keys(text)")
    op.execute("DROP FUNCTION loom_cue_keys(text[])")
    op.execute("DROP FUNCTION loom_words(text)")
