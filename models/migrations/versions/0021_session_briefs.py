"""Session briefs: the briefs, every revision, and the saves with their windows of events

A brief is unique by (namespace, brief_key); deleting one deletes its revisions, saves and windows.

Revision ID: 0021
"""

from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
        CREATE TABLE session_briefs (
            id bigserial PRIMARY KEY,
            namespace varchar(128) NOT NULL,
            brief_key varchar(512) NOT NULL,
            project varchar(128),
            branch varchar(128),
            revision integer NOT NULL DEFAULT 0,
            sections jsonb NOT NULL DEFAULT '{}',
            author varchar(16),
            session_id varchar(256),
            written_by varchar(64) NOT NULL,
            client_summary text,
            last_save_id bigint,
            created_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL,
            UNIQUE (namespace, brief_key)
        )
    """)
    op.execute(
        "CREATE INDEX ix_session_briefs_newest ON session_briefs (namespace, updated_at DESC, id DESC)"
    )
    op.execute(
        "CREATE INDEX ix_session_briefs_project ON session_briefs (namespace, project, updated_at DESC)"
    )
    op.execute("""
        CREATE TABLE session_brief_revisions (
            id bigserial PRIMARY KEY,
            brief_id bigint NOT NULL REFERENCES session_briefs (id) ON DELETE CASCADE,
            revision integer NOT NULL,
            sections jsonb NOT NULL,
            author varchar(16) NOT NULL,
            session_id varchar(256),
            save_id bigint,
            created_at timestamptz NOT NULL,
            UNIQUE (brief_id, revision)
        )
    """)
    # brief_get(from_session): the newest revision a session wrote.
    op.execute("CREATE INDEX ix_brief_revisions_session ON session_brief_revisions (session_id, id DESC)")
    op.execute("""
        CREATE TABLE session_brief_saves (
            id bigserial PRIMARY KEY,
            brief_id bigint NOT NULL REFERENCES session_briefs (id) ON DELETE CASCADE,
            session_id varchar(256),
            event_cursor varchar(256),
            author varchar(16) NOT NULL,
            status varchar(16) NOT NULL,
            windows integer NOT NULL DEFAULT 0,
            created_at timestamptz NOT NULL,
            finished_at timestamptz
        )
    """)
    op.execute("CREATE INDEX ix_brief_saves_brief ON session_brief_saves (brief_id, id DESC)")
    op.execute("""
        CREATE TABLE session_brief_windows (
            id bigserial PRIMARY KEY,
            save_id bigint NOT NULL REFERENCES session_brief_saves (id) ON DELETE CASCADE,
            position integer NOT NULL,
            events jsonb NOT NULL,
            status varchar(16) NOT NULL,
            revision integer,
            error text,
            UNIQUE (save_id, position)
        )
    """)


def downgrade() -> None:
    for table in (
        "session_brief_windows",
        "session_brief_saves",
        "session_brief_revisions",
        "session_briefs",
    ):
        op.execute(f"DROP TABLE {table}")
