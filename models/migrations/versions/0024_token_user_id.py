"""api_tokens.user_id: the user a token speaks for, whatever its read scope (the owner of the
coding-session threads it writes); unlike read_user_id it bounds nothing the token may read

Revision ID: 0024
"""

from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE api_tokens ADD COLUMN user_id varchar(256)")


def downgrade() -> None:
    op.execute("ALTER TABLE api_tokens DROP COLUMN user_id")
