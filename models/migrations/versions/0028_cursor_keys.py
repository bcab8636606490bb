"""cursor_keys: the secrets paging cursors are signed with (HMAC-SHA256), shared by every API
process through the database; the first key is made here (``ops.cursors.rotate_key`` adds the
next ones)

Revision ID: 0028
"""

import secrets

import sqlalchemy as sa
from alembic import op

revision = "0028"
down_revision = "0027"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
        CREATE TABLE cursor_keys (
            id serial PRIMARY KEY,
            secret bytea NOT NULL CHECK (length(secret) >= 32),
            created_at timestamptz NOT NULL
        )
    """)
    op.get_bind().execute(
        sa.text("INSERT INTO cursor_keys (secret, created_at) VALUES (:secret, now())"),
        {"secret": secrets.token_bytes(32)},
    )


def downgrade() -> None:
    op.execute("DROP TABLE cursor_keys")
