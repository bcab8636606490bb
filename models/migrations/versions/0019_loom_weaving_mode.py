"""looms.weaving_mode: Auto (extraction writes memory threads) or Suggest (it proposes them to the
agent's session, pendingProposals, for the agent to weave)

Revision ID: 0019
"""

from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE looms ADD COLUMN weaving_mode varchar(16) NOT NULL DEFAULT 'Auto'")


def downgrade() -> None:
    op.execute("ALTER TABLE looms DROP COLUMN weaving_mode")
