"""ix_embeddings_scope: the live vectors of a namespace (and thread), with the role and run they
serve, so that the vector leg counts a search's scope from the index alone

Revision ID: 0014
"""

from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        "CREATE INDEX ix_embeddings_scope ON embeddings (namespace, model, thread_id) INCLUDE (role, run_id) "
        "WHERE deleted_at IS NULL AND vector IS NOT NULL"
    )


def downgrade() -> None:
    op.execute("DROP INDEX ix_embeddings_scope")
