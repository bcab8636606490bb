"""pass_runs: the last firing of each periodic pass (`loom passes list`); stage runs indexed by
subject (the passes ask whether a thread was already asked as it stands)

Revision ID: 0007
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "pass_runs",
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("sent", sa.Integer(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("by", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_index("ix_stage_runs_subject", "stage_runs", ["stage", "subject", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_stage_runs_subject", table_name="stage_runs")
    op.drop_table("pass_runs")
