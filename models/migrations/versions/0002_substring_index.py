"""a trigram index for the substring fallback of conversation.search

``pipelines.search.by_substring`` (used exactly when the embedder cannot answer) matches
``content ILIKE '%term%'``: without an index that reads every turn. A GIN trigram index (pg_trgm,
shipped with the embedded PostgreSQL and a trusted extension elsewhere) serves such a match for terms
of three characters or more. It is partial, over the turns the fallback may return at all: its
predicate is the one ``by_substring`` states as literals (keep the two the same), so the planner
can prove the query implies it whatever the bound parameters are.

Built CONCURRENTLY (outside the migration's transaction), so appends go on while it builds on a
table that already holds turns.

Revision ID: 0002
"""

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

INDEX = "ix_turns_content_trgm"
PREDICATE = "role IN ('user', 'assistant') AND deleted_at IS NULL AND sensitivity <> 'high'"


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    with op.get_context().autocommit_block():
        # A build that was interrupted leaves an invalid index of this name: start again.
        op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {INDEX}")
        op.execute(
            f"CREATE INDEX CONCURRENTLY {INDEX} ON turns USING gin (content gin_trgm_ops) WHERE {PREDICATE}"
        )


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {INDEX}")
    # pg_trgm stays: dropping an extension other objects may use is the operator's call.
