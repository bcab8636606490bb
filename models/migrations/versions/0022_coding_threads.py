"""Coding-session threads (the third seed): one row a thread, its whole body as sent and the
columns the server reads (owner, version, visibility, git metadata, activity), with a full-text
index over its title, branch, remote, tags and messages

``coding_threads``, since ``threads`` is the conversation plane's. ``indexed_count`` is how many
of its messages the indexing stage has turned into turns.

Revision ID: 0022
"""

from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
        CREATE TABLE coding_threads (
            row_id bigserial UNIQUE,
            id varchar(40) PRIMARY KEY,
            namespace varchar(128) NOT NULL,
            owner varchar(256) NOT NULL,
            version bigint NOT NULL,
            visibility varchar(16) NOT NULL,
            is_shared_with_support boolean NOT NULL,
            title text,
            git_branch text,
            git_remote_url text,
            git_commits text[] NOT NULL DEFAULT '{}',
            message_count integer NOT NULL,
            indexed_count integer NOT NULL DEFAULT 0,
            created_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL,
            last_activity_at timestamptz NOT NULL,
            body jsonb NOT NULL,
            search_text text NOT NULL,
            lexemes tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, search_text)) STORED
        )
    """)
    op.execute("CREATE INDEX ix_coding_threads_search ON coding_threads USING gin (lexemes)")
    op.execute(
        "CREATE INDEX ix_coding_threads_owner ON coding_threads (namespace, owner, last_activity_at DESC)"
    )
    op.execute("CREATE INDEX ix_coding_threads_activity ON coding_threads (namespace, last_activity_at DESC)")


def downgrade() -> None:
    op.execute("DROP TABLE coding_threads")
