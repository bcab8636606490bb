"""stage_runs.claim (the token of the claim holding a running run) and an index on the model of
stored vectors (the re-embedding pass's probe)

The index is partial over rows with a vector (the only ones the pass reads) and built
CONCURRENTLY, so appends go on while it builds on a table that already holds embeddings.

Revision ID: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

INDEX = "ix_embeddings_model"


def upgrade() -> None:
    op.add_column("stage_runs", sa.Column("claim", sa.String(length=32), nullable=True))
    with op.get_context().autocommit_block():
        op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {INDEX}")  # an interrupted build's leftover
        op.execute(f"CREATE INDEX CONCURRENTLY {INDEX} ON embeddings (model) WHERE vector IS NOT NULL")


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {INDEX}")
    op.drop_column("stage_runs", "claim")
