"""initial schema

The embedding column's width is LOOM_EMBED_DIMENSIONS at the time this runs (384, MiniLM).

Revision ID: 0001
"""

import pgvector.sqlalchemy
import sqlalchemy as sa
import sqlmodel
from alembic import op
from sqlalchemy.dialects import postgresql

from models.settings import get_settings

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("token_hash", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("role", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("namespaces", sa.ARRAY(sa.Text()), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token_hash"),
    )
    op.create_table(
        "namespaces",
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(length=128), nullable=False),
        sa.Column("conversation_logging_enabled", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "stage_runs",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("stage", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("subject", sqlmodel.sql.sqltypes.AutoString(length=256), nullable=False),
        sa.Column("idem_key", sqlmodel.sql.sqltypes.AutoString(length=256), nullable=False),
        sa.Column("status", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("reason", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("idem_key"),
    )
    op.create_index(
        "ix_stage_runs_live",
        "stage_runs",
        ["stage", "updated_at"],
        unique=False,
        postgresql_where=sa.text("status IN ('pending', 'running')"),
    )
    op.create_index("ix_stage_runs_status_stage", "stage_runs", ["status", "stage"], unique=False)
    op.create_table(
        "threads",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("namespace", sqlmodel.sql.sqltypes.AutoString(length=128), nullable=False),
        sa.Column("thread_id", sqlmodel.sql.sqltypes.AutoString(length=256), nullable=False),
        sa.Column("agent", sqlmodel.sql.sqltypes.AutoString(length=128), nullable=False),
        sa.Column("title", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("metadata", postgresql.JSONB(astext_type=sa.Text()), server_default="{}", nullable=False),
        sa.Column("run_id", sqlmodel.sql.sqltypes.AutoString(length=256), nullable=True),
        sa.Column("turn_count", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_turn_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("namespace", "thread_id"),
    )
    op.create_index("ix_threads_namespace_last_turn", "threads", ["namespace", "last_turn_at"], unique=False)
    op.create_table(
        "turns",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("namespace", sqlmodel.sql.sqltypes.AutoString(length=128), nullable=False),
        sa.Column("thread_id", sqlmodel.sql.sqltypes.AutoString(length=256), nullable=False),
        sa.Column("agent", sqlmodel.sql.sqltypes.AutoString(length=128), nullable=False),
        sa.Column("msg_id", sqlmodel.sql.sqltypes.AutoString(length=128), nullable=False),
        sa.Column("role", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("reasoning", sa.Text(), nullable=True),
        sa.Column("user_id", sqlmodel.sql.sqltypes.AutoString(length=256), nullable=True),
        sa.Column("run_id", sqlmodel.sql.sqltypes.AutoString(length=256), nullable=True),
        sa.Column("metadata", postgresql.JSONB(astext_type=sa.Text()), server_default="{}", nullable=False),
        sa.Column("tokens", sa.Integer(), nullable=True),
        sa.Column("sensitivity", sqlmodel.sql.sqltypes.AutoString(length=8), nullable=False),
        sa.Column("ts", sa.DateTime(timezone=True), nullable=False),
        sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("namespace", "thread_id", "msg_id"),
    )
    op.create_index(op.f("ix_turns_agent"), "turns", ["agent"], unique=False)
    op.create_index(op.f("ix_turns_run_id"), "turns", ["run_id"], unique=False)
    op.create_index("ix_turns_thread_ts", "turns", ["namespace", "thread_id", "ts"], unique=False)
    op.create_table(
        "embeddings",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("turn_id", sa.BigInteger(), nullable=False),
        sa.Column("namespace", sqlmodel.sql.sqltypes.AutoString(length=128), nullable=False),
        sa.Column("thread_id", sqlmodel.sql.sqltypes.AutoString(length=256), nullable=False),
        sa.Column("agent", sqlmodel.sql.sqltypes.AutoString(length=128), nullable=False),
        sa.Column("msg_id", sqlmodel.sql.sqltypes.AutoString(length=128), nullable=False),
        sa.Column("role", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("run_id", sqlmodel.sql.sqltypes.AutoString(length=256), nullable=True),
        sa.Column("user_id", sqlmodel.sql.sqltypes.AutoString(length=256), nullable=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("digest", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("model", sqlmodel.sql.sqltypes.AutoString(length=128), nullable=True),
        sa.Column(
            "vector", pgvector.sqlalchemy.vector.VECTOR(dim=get_settings().embed_dimensions), nullable=True
        ),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("embedded_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["turn_id"], ["turns.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("turn_id"),
    )
    op.create_index(op.f("ix_embeddings_namespace"), "embeddings", ["namespace"], unique=False)
    op.create_index(
        "ix_embeddings_vector_hnsw",
        "embeddings",
        ["vector"],
        postgresql_using="hnsw",
        postgresql_ops={"vector": "vector_cosine_ops"},
    )


def downgrade() -> None:
    op.drop_index("ix_embeddings_vector_hnsw", table_name="embeddings")
    op.drop_index(op.f("ix_embeddings_namespace"), table_name="embeddings")
    op.drop_table("embeddings")
    op.drop_index("ix_turns_thread_ts", table_name="turns")
    op.drop_index(op.f("ix_turns_run_id"), table_name="turns")
    op.drop_index(op.f("ix_turns_agent"), table_name="turns")
    op.drop_table("turns")
    op.drop_index("ix_threads_namespace_last_turn", table_name="threads")
    op.drop_table("threads")
    op.drop_index("ix_stage_runs_status_stage", table_name="stage_runs")
    op.drop_index(
        "ix_stage_runs_live",
        table_name="stage_runs",
        postgresql_where=sa.text("status IN ('pending', 'running')"),
    )
    op.drop_table("stage_runs")
    op.drop_table("namespaces")
    op.drop_table("api_tokens")
