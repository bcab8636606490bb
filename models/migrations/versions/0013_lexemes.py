"""turns.lexemes and turns.lexical_length: the English full-text vector of a turn's text and its
number of words (BM25's document length), for the lexical leg of search

Generated from the first 200,000 characters (a tsvector holds at most 1 MB of lexemes; 200,000
characters stay under it whatever their encoding), with a GIN index over the turns search reads.

Revision ID: 0013
"""

from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

LEXICAL_CHARS = 200_000


def upgrade() -> None:
    vector = f"to_tsvector('english'::regconfig, left(content, {LEXICAL_CHARS}))"
    op.execute(f"ALTER TABLE turns ADD COLUMN lexemes tsvector GENERATED ALWAYS AS ({vector}) STORED")
    # The words a tsvector counts (stop words left out): the sum of its lexemes' positions.
    op.execute("""
        CREATE FUNCTION loom_word_count(tsvector) RETURNS integer
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
        AS $$ SELECT coalesce(sum(coalesce(array_length(positions, 1), 1)), 0)::integer FROM unnest($1) $$
    """)
    op.execute(
        "ALTER TABLE turns ADD COLUMN lexical_length integer "
        f"GENERATED ALWAYS AS (loom_word_count({vector})) STORED"
    )
    op.execute(
        "CREATE INDEX ix_turns_lexemes ON turns USING gin (lexemes) "
        "WHERE role IN ('user', 'assistant') AND deleted_at IS NULL AND sensitivity <> 'high'"
    )


def downgrade() -> None:
    op.execute("DROP INDEX ix_turns_lexemes")
    op.execute("ALTER TABLE turns DROP COLUMN lexical_length")
    op.execute("ALTER TABLE turns DROP COLUMN lexemes")
    op.execute("DROP FUNCTION loom_word_count(tsvector)")
