"""transcripts.first_line: a piece of a JSON-lines session file names the line it starts at

Revision ID: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("transcripts", sa.Column("first_line", sa.Integer(), nullable=False, server_default="1"))


def downgrade() -> None:
    op.drop_column("transcripts", "first_line")
