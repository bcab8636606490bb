"""loom_run_key(stage, subject_id, version): a stage run's idempotency key, defined once for the
SQL that writes or joins runs (APPEND_TURN, the re-embedding picks) and for Python
(``models.stages.Stage.key`` calls it in the statement that needs it)

Revision ID: 0030
"""

from alembic import op

revision = "0030"
down_revision = "0029"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # IMMUTABLE and plain SQL: the planner inlines it, so a join or an IN list on the key still
    # probes the unique index on idem_key.
    op.execute("""
        CREATE FUNCTION loom_run_key(stage text, subject_id bigint, version text) RETURNS text
        LANGUAGE sql IMMUTABLE PARALLEL SAFE
        RETURN stage || ':' || subject_id || ':' || version
    """)


def downgrade() -> None:
    op.execute("DROP FUNCTION loom_run_key(text, bigint, text)")
