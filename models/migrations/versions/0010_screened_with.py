"""turns.screened_with: the version of the screening rules that judged each turn

Turns written before it count as judged by version 0, so the first re-screening pass after this
upgrade judges them all once with the rules of today.

Revision ID: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A constant default: PostgreSQL adds the column without rewriting the table.
    op.add_column("turns", sa.Column("screened_with", sa.SmallInteger(), nullable=False, server_default="0"))
    # The re-screening pass's pick (turns judged by an older version) is an index range, empty
    # once every turn is current.
    op.create_index("ix_turns_screened_with", "turns", ["screened_with", "id"])


def downgrade() -> None:
    op.drop_index("ix_turns_screened_with", table_name="turns")
    op.drop_column("turns", "screened_with")
