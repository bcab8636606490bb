"""ix_turns_namespace_lexemes also holds compaction summaries (system turns that name the turns
they replace, ``metadata.compacted_from``): search finds a summary in place of its originals in the
lexical leg as in the vector one. Other system and tool turns stay out.

Revision ID: 0031
"""

from alembic import op

revision = "0031"
down_revision = "0030"
branch_labels = None
depends_on = None

LIVE = "deleted_at IS NULL AND sensitivity <> 'high'"
BEFORE = f"role IN ('user', 'assistant') AND {LIVE}"
AFTER = f"(role IN ('user', 'assistant') OR (role = 'system' AND metadata ? 'compacted_from')) AND {LIVE}"


def _index(predicate: str) -> None:
    op.execute("DROP INDEX ix_turns_namespace_lexemes")
    op.execute(
        f"CREATE INDEX ix_turns_namespace_lexemes ON turns USING gin (namespace, lexemes) WHERE {predicate}"
    )


def upgrade() -> None:
    _index(AFTER)


def downgrade() -> None:
    _index(BEFORE)
