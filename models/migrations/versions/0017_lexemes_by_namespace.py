"""ix_turns_lexemes becomes (namespace, lexemes) (btree_gin): the lexical leg finds a word's turns
in one namespace inside the index, not among every namespace's

Revision ID: 0017
"""

from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

INDEXED = "role IN ('user', 'assistant') AND deleted_at IS NULL AND sensitivity <> 'high'"


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS btree_gin")
    op.execute(
        f"CREATE INDEX ix_turns_namespace_lexemes ON turns USING gin (namespace, lexemes) WHERE {INDEXED}"
    )
    op.execute("DROP INDEX ix_turns_lexemes")


def downgrade() -> None:
    op.execute(f"CREATE INDEX ix_turns_lexemes ON turns USING gin (lexemes) WHERE {INDEXED}")
    op.execute("DROP INDEX ix_turns_namespace_lexemes")
