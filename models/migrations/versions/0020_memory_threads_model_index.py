"""An index on the model of memory threads' vectors: the re-embedding pass's probe, as
ix_embeddings_model (0004) is for turns

Partial over live threads with a vector (the only ones the pass reads), built CONCURRENTLY so
memory writes go on while it builds.

Revision ID: 0020
"""

from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None

INDEX = "ix_memory_threads_model"


def upgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {INDEX}")  # an interrupted build's leftover
        op.execute(
            f"CREATE INDEX CONCURRENTLY {INDEX} ON memory_threads (model)"
            " WHERE vector IS NOT NULL AND cut_at IS NULL"
        )


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {INDEX}")
