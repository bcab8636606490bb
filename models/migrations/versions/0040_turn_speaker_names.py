"""Turns carry their speaker's name: where several people share a role (two friends chatting, a
support team), conversation.append's ``name`` says who spoke, and a search naming that person lifts
their words (``pipelines.hints``)

Revision ID: 0040
"""

from alembic import op

revision = "0040"
down_revision = "0039"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE turns ADD COLUMN name varchar(128)")


def downgrade() -> None:
    op.execute("ALTER TABLE turns DROP COLUMN name")
