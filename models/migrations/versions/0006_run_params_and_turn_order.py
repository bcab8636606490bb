"""A stage run's parameters and result; turns read in (ts, id) order

- stage_runs.params: what the run was asked (a compaction's agent, keep_recent, min_to_compact),
  stage_runs.result: what it did (the summary's msg_id, how many turns it summarised).
- turns are read in (ts, id) order, so a compaction's summary, stamped with the first summarised
  turn's time, reads where the turns it replaces were: an index for that order.

Revision ID: 0006
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "stage_runs",
        sa.Column("params", postgresql.JSONB(astext_type=sa.Text()), server_default="{}", nullable=False),
    )
    op.add_column("stage_runs", sa.Column("result", postgresql.JSONB(astext_type=sa.Text()), nullable=True))
    op.create_index("ix_turns_thread_ts_id", "turns", ["namespace", "thread_id", "ts", "id"])


def downgrade() -> None:
    op.drop_index("ix_turns_thread_ts_id", table_name="turns")
    op.drop_column("stage_runs", "result")
    op.drop_column("stage_runs", "params")
