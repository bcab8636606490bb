"""erasure_log (append-only: UPDATE, DELETE and TRUNCATE are refused), and the indexes an erasure
by user reads turns and embedding rows through

Revision ID: 0012
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "erasure_log",
        sa.Column("id", sa.BigInteger(), primary_key=True),
        sa.Column("erasure_id", sa.BigInteger(), nullable=True),
        sa.Column("event", sa.String(16), nullable=False),
        sa.Column("actor", sa.String(128), nullable=False),
        sa.Column("scope", JSONB(), nullable=False),
        sa.Column("rows", JSONB(), nullable=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_erasure_log_erasure_id", "erasure_log", ["erasure_id"])
    op.execute("""
        CREATE FUNCTION erasure_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION 'erasure_log is append-only';
        END $$
    """)
    op.execute(
        "CREATE TRIGGER erasure_log_no_change BEFORE UPDATE OR DELETE ON erasure_log "
        "FOR EACH ROW EXECUTE FUNCTION erasure_log_append_only()"
    )
    op.execute(
        "CREATE TRIGGER erasure_log_no_truncate BEFORE TRUNCATE ON erasure_log "
        "FOR EACH STATEMENT EXECUTE FUNCTION erasure_log_append_only()"
    )
    op.execute("CREATE INDEX ix_turns_user ON turns (namespace, user_id) WHERE user_id IS NOT NULL")
    op.execute("CREATE INDEX ix_embeddings_user ON embeddings (namespace, user_id) WHERE user_id IS NOT NULL")


def downgrade() -> None:
    op.execute("DROP INDEX ix_embeddings_user")
    op.execute("DROP INDEX ix_turns_user")
    op.drop_table("erasure_log")  # its triggers go with it
    op.execute("DROP FUNCTION erasure_log_append_only()")
