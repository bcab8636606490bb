"""Working memory: one block per (namespace, user, project, branch), every revision kept

Deleting a block deletes its revisions.

Revision ID: 0034
"""

from alembic import op

revision = "0034"
down_revision = "0033"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
        CREATE TABLE working_memory (
            id bigserial PRIMARY KEY,
            namespace varchar(128) NOT NULL,
            user_id varchar(256) NOT NULL DEFAULT '',
            project varchar(128) NOT NULL DEFAULT '',
            branch varchar(128) NOT NULL DEFAULT '',
            content text NOT NULL,
            sensitivity varchar(16) NOT NULL,
            revision integer NOT NULL,
            session_id varchar(256),
            written_by varchar(64) NOT NULL,
            created_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL,
            UNIQUE (namespace, user_id, project, branch)
        )
    """)
    op.execute("""
        CREATE TABLE working_memory_revisions (
            id bigserial PRIMARY KEY,
            block_id bigint NOT NULL REFERENCES working_memory (id) ON DELETE CASCADE,
            revision integer NOT NULL,
            content text NOT NULL,
            sensitivity varchar(16) NOT NULL,
            session_id varchar(256),
            written_by varchar(64) NOT NULL,
            created_at timestamptz NOT NULL,
            UNIQUE (block_id, revision)
        )
    """)


def downgrade() -> None:
    op.execute("DROP TABLE working_memory_revisions")
    op.execute("DROP TABLE working_memory")
