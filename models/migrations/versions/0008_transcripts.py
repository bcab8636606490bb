"""transcripts: whole transcripts handed over by conversation.ingest, kept raw for the ingest stage

Revision ID: 0008
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "transcripts",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("namespace", sqlmodel.sql.sqltypes.AutoString(length=128), nullable=False),
        sa.Column("thread_id", sqlmodel.sql.sqltypes.AutoString(length=256), nullable=False),
        sa.Column("agent", sqlmodel.sql.sqltypes.AutoString(length=128), nullable=False),
        sa.Column("source", sqlmodel.sql.sqltypes.AutoString(length=256), nullable=True),
        sa.Column("raw", sa.Text(), nullable=False),
        sa.Column("digest", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("size_bytes", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ux_transcripts_content", "transcripts", ["namespace", "thread_id", "agent", "digest"], unique=True
    )


def downgrade() -> None:
    op.drop_index("ux_transcripts_content", table_name="transcripts")
    op.drop_table("transcripts")
