"""api_tokens.read_scope (namespace | own_user | own_session) with the user or session such a token
is pinned to

Revision ID: 0016
"""

from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE api_tokens ADD COLUMN read_scope varchar(16) NOT NULL DEFAULT 'namespace'")
    op.execute("ALTER TABLE api_tokens ADD COLUMN read_user_id varchar(256)")
    op.execute("ALTER TABLE api_tokens ADD COLUMN read_session_id varchar(256)")


def downgrade() -> None:
    for column in ("read_session_id", "read_user_id", "read_scope"):
        op.execute(f"ALTER TABLE api_tokens DROP COLUMN {column}")
