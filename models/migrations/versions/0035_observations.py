"""Observations: a coding agent's tool actions, by session, once each

Unique by (namespace, session_id, action_key): a hook that sends an action again stores nothing.

Revision ID: 0035
"""

from alembic import op

revision = "0035"
down_revision = "0034"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
        CREATE TABLE observations (
            id bigserial PRIMARY KEY,
            namespace varchar(128) NOT NULL,
            session_id varchar(256) NOT NULL,
            action_key varchar(128) NOT NULL,
            run_id varchar(256),
            agent varchar(128) NOT NULL,
            user_id varchar(256),
            project varchar(128),
            branch varchar(128),
            tool varchar(128) NOT NULL,
            input_sha256 varchar(64) NOT NULL,
            summary varchar(200) NOT NULL,
            outcome varchar(16) NOT NULL,
            files text[] NOT NULL DEFAULT '{}',
            error text,
            sensitivity varchar(16) NOT NULL,
            ts timestamptz NOT NULL,
            crystallized_at timestamptz,
            created_at timestamptz NOT NULL,
            UNIQUE (namespace, session_id, action_key)
        )
    """)
    # observe.crystallize's read: a session's actions not crystallized yet, in the order they ran.
    op.execute(
        "CREATE INDEX ix_observations_pending ON observations (namespace, session_id, ts, id) "
        "WHERE crystallized_at IS NULL"
    )


def downgrade() -> None:
    op.execute("DROP TABLE observations")
