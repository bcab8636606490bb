"""Saved messages: is_saved and saved_at on turns and on their embedding rows, the mark of a turn
that exists only because a user saved it, and the indexes a user's saved messages are read by

Revision ID: 0015
"""

from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Constant defaults: PostgreSQL adds these columns without rewriting the tables.
    for table in ("turns", "embeddings"):
        op.execute(f"ALTER TABLE {table} ADD COLUMN is_saved boolean NOT NULL DEFAULT false")
        op.execute(f"ALTER TABLE {table} ADD COLUMN saved_at timestamptz")
    op.execute("ALTER TABLE turns ADD COLUMN stored_by_save boolean NOT NULL DEFAULT false")
    op.execute(
        "CREATE INDEX ix_turns_saved ON turns (namespace, user_id, saved_at DESC, id DESC) WHERE is_saved"
    )
    op.execute(
        "CREATE INDEX ix_embeddings_saved ON embeddings (namespace, user_id) "
        "WHERE is_saved AND deleted_at IS NULL"
    )


def downgrade() -> None:
    op.execute("DROP INDEX ix_embeddings_saved")
    op.execute("DROP INDEX ix_turns_saved")
    op.execute("ALTER TABLE turns DROP COLUMN stored_by_save")
    for table in ("turns", "embeddings"):
        op.execute(f"ALTER TABLE {table} DROP COLUMN saved_at")
        op.execute(f"ALTER TABLE {table} DROP COLUMN is_saved")
