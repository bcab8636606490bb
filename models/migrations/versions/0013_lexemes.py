"""turns.lexemes: the English full-text vector of a turn's text, for the BM25 leg of search

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
    op.execute(
        "ALTER TABLE turns ADD COLUMN lexemes tsvector "
        f"GENERATED ALWAYS AS (to_tsvector('english'::regconfig, left(content, {LEXICAL_CHARS}))) STORED"
    )
    op.execute(
        "CREATE INDEX ix_turns_lexemes ON turns USING gin (lexemes) "
        "WHERE role IN ('user', 'assistant') AND deleted_at IS NULL AND sensitivity <> 'high'"
    )


def downgrade() -> None:
    op.execute("DROP INDEX ix_turns_lexemes")
    op.execute("ALTER TABLE turns DROP COLUMN lexemes")
