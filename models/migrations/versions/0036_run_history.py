"""A stage run's attempts as a history: each failed attempt's number, time and error

``last_error`` alone showed a run that succeeded on retry with its old error as if it were
current. A run that failed before this migration shows its last error as its one known attempt.

Revision ID: 0036
"""

from alembic import op

revision = "0036"
down_revision = "0035"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE stage_runs ADD COLUMN history jsonb NOT NULL DEFAULT '[]'")
    op.execute("""
        UPDATE stage_runs
        SET history = jsonb_build_array(
            jsonb_build_object('attempt', greatest(attempts, 1), 'at', updated_at, 'error', last_error)
        )
        WHERE last_error IS NOT NULL
    """)


def downgrade() -> None:
    op.execute("ALTER TABLE stage_runs DROP COLUMN history")
