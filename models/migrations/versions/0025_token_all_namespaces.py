"""api_tokens.all_namespaces: a token for every namespace, present and future (the operator's
credential for the HTTP operator ops and the dashboard); its namespaces array stays empty

Revision ID: 0025
"""

from alembic import op

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE api_tokens ADD COLUMN all_namespaces boolean NOT NULL DEFAULT false")


def downgrade() -> None:
    op.execute("ALTER TABLE api_tokens DROP COLUMN all_namespaces")
