"""ui_sessions: the dashboard's sign-ins. The browser holds a random session id (an HTTP-only
cookie); the row holds its hash, the hash of the token signed in with, and the session's CSRF
secret, until it expires or is signed out

Revision ID: 0026
"""

from alembic import op

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
        CREATE TABLE ui_sessions (
            id_hash varchar(64) PRIMARY KEY,
            token_hash varchar(64) NOT NULL,
            csrf varchar(64) NOT NULL,
            created_at timestamptz NOT NULL,
            expires_at timestamptz NOT NULL
        )
    """)
    op.execute("CREATE INDEX ix_ui_sessions_expires ON ui_sessions (expires_at)")


def downgrade() -> None:
    op.execute("DROP TABLE ui_sessions")
