"""Trigram indexes on coding threads' remote URL and branch, so a search's remote/branch substring
match is an index probe beside the full-text one (a BitmapOr), not a scan of every thread

Revision ID: 0023
"""

from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # pg_trgm is installed by 0002.
    op.execute(
        "CREATE INDEX ix_coding_threads_remote ON coding_threads USING gin (git_remote_url gin_trgm_ops)"
    )
    op.execute("CREATE INDEX ix_coding_threads_branch ON coding_threads USING gin (git_branch gin_trgm_ops)")


def downgrade() -> None:
    op.execute("DROP INDEX ix_coding_threads_branch")
    op.execute("DROP INDEX ix_coding_threads_remote")
