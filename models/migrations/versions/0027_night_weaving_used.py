"""night_weavings.used: of the threads a night judged, how many were used (the rest decayed as
unused), for the dashboard's nights

Revision ID: 0027
"""

from alembic import op

revision = "0027"
down_revision = "0026"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE night_weavings ADD COLUMN used integer NOT NULL DEFAULT 0")


def downgrade() -> None:
    op.execute("ALTER TABLE night_weavings DROP COLUMN used")
