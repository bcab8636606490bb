"""The memory plane: looms, memory threads (embedded and with their lexemes), the evidence
extraction read, LoomSessions and night weavings; and the per-thread turn sequence sessions follow

turns.seq numbers each thread's turns in the order they were written (threads.last_seq is the
counter, taken under the thread row's lock by the append). Turns written before this revision have
no sequence: no session existed then to follow them.

Revision ID: 0018
"""

from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

LEXICAL_CHARS = 200_000
UUIDS = "uuid[] NOT NULL DEFAULT '{}'"


def upgrade() -> None:
    op.execute("ALTER TABLE threads ADD COLUMN last_seq bigint NOT NULL DEFAULT 0")
    op.execute("ALTER TABLE turns ADD COLUMN seq bigint")
    op.execute("""
        CREATE TABLE looms (
            id uuid PRIMARY KEY,
            namespace varchar(128) NOT NULL,
            name varchar(128) NOT NULL,
            is_default boolean NOT NULL DEFAULT false,
            created_at timestamptz NOT NULL,
            UNIQUE (namespace, name)
        )
    """)
    op.execute("CREATE UNIQUE INDEX ux_looms_default ON looms (namespace) WHERE is_default")
    # The vector is as wide as the turns' (one embedder serves both planes).
    width = (
        op.get_bind()
        .exec_driver_sql(
            "SELECT atttypmod FROM pg_attribute WHERE attrelid = 'embeddings'::regclass AND attname = 'vector'"
        )
        .scalar()
    )
    lexemes = f"to_tsvector('english'::regconfig, left(content, {LEXICAL_CHARS}))"
    op.execute(f"""
        CREATE TABLE memory_evidence (
            id bigserial PRIMARY KEY,
            loom_id uuid NOT NULL REFERENCES looms (id),
            namespace varchar(128) NOT NULL,
            thread_id varchar(256) NOT NULL,
            msg_id varchar(128) NOT NULL,
            agent varchar(128) NOT NULL,
            role varchar(16) NOT NULL,
            content text NOT NULL,
            user_id varchar(256),
            run_id varchar(256),
            ts timestamptz NOT NULL,
            sensitivity varchar(16) NOT NULL,
            created_at timestamptz NOT NULL,
            lexemes tsvector GENERATED ALWAYS AS ({lexemes}) STORED,
            lexical_length integer GENERATED ALWAYS AS (loom_word_count({lexemes})) STORED,
            UNIQUE (loom_id, thread_id, msg_id)
        )
    """)
    op.execute("CREATE INDEX ix_memory_evidence_lexemes ON memory_evidence USING gin (lexemes)")
    op.execute("CREATE INDEX ix_memory_evidence_time ON memory_evidence (loom_id, ts)")
    op.execute(f"""
        CREATE TABLE memory_threads (
            row_id bigserial UNIQUE,
            id uuid PRIMARY KEY,
            loom_id uuid NOT NULL REFERENCES looms (id),
            namespace varchar(128) NOT NULL,
            content text NOT NULL,
            kind varchar(32) NOT NULL,
            weight double precision NOT NULL,
            subjects text[] NOT NULL DEFAULT '{{}}',
            tags text[] NOT NULL DEFAULT '{{}}',
            cues text[] NOT NULL DEFAULT '{{}}',
            until timestamptz,
            basis varchar(32) NOT NULL,
            pinned boolean NOT NULL DEFAULT false,
            agent varchar(128),
            run_id varchar(256),
            evidence_ids bigint[] NOT NULL DEFAULT '{{}}',
            source_key varchar(64),
            vector vector({width}),
            model varchar(128),
            digest varchar(64) NOT NULL,
            embedded_at timestamptz,
            embed_error text,
            created_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL,
            cut_at timestamptz,
            lexemes tsvector GENERATED ALWAYS AS ({lexemes}) STORED,
            lexical_length integer GENERATED ALWAYS AS (loom_word_count({lexemes})) STORED
        )
    """)
    op.execute("CREATE UNIQUE INDEX ux_memory_threads_source ON memory_threads (loom_id, source_key)")
    op.execute(
        "CREATE INDEX ix_memory_threads_loom ON memory_threads (loom_id, weight DESC) WHERE cut_at IS NULL"
    )
    op.execute(
        "CREATE INDEX ix_memory_threads_lexemes ON memory_threads USING gin (lexemes) WHERE cut_at IS NULL"
    )
    op.execute("""
        CREATE TABLE night_weavings (
            id uuid PRIMARY KEY,
            loom_id uuid REFERENCES looms (id),
            started_at timestamptz NOT NULL,
            finished_at timestamptz,
            sessions integer NOT NULL DEFAULT 0,
            consolidated integer NOT NULL DEFAULT 0,
            episodes integer NOT NULL DEFAULT 0,
            judged integer NOT NULL DEFAULT 0,
            by varchar(16) NOT NULL
        )
    """)
    op.execute(f"""
        CREATE TABLE loom_sessions (
            row_id bigserial UNIQUE,
            id uuid PRIMARY KEY,
            loom_id uuid NOT NULL REFERENCES looms (id),
            namespace varchar(128) NOT NULL,
            thread_id varchar(256) NOT NULL,
            run_id varchar(256),
            tenant_id uuid NOT NULL,
            interaction_process_id uuid NOT NULL,
            agent_name varchar(128) NOT NULL,
            agent_id uuid,
            tapestry text,
            tapestry_woven_at timestamptz,
            subjects text[] NOT NULL DEFAULT '{{}}',
            tapestry_thread_ids {UUIDS},
            suggested_thread_ids {UUIDS},
            held_back_thread_ids {UUIDS},
            cued_thread_ids {UUIDS},
            held_thread_ids {UUIDS},
            pending_gift_thread_ids {UUIDS},
            recalled_thread_ids {UUIDS},
            woven_thread_ids {UUIDS},
            seen_thread_ids {UUIDS},
            pending_proposals jsonb NOT NULL DEFAULT '[]',
            last_turn_at timestamptz,
            last_sequence bigint NOT NULL DEFAULT 0,
            awaiting_night boolean NOT NULL DEFAULT false,
            consolidated_up_to_sequence bigint NOT NULL DEFAULT 0,
            judged_thread_ids {UUIDS},
            consolidated_by_night_weaving_id uuid REFERENCES night_weavings (id),
            known_thread_ids {UUIDS},
            date_created timestamptz NOT NULL,
            date_updated timestamptz NOT NULL,
            UNIQUE (loom_id, interaction_process_id, agent_name)
        )
    """)
    # An append finds the sessions it moves on by the thread and the agent.
    op.execute("CREATE INDEX ix_loom_sessions_thread ON loom_sessions (namespace, thread_id, agent_name)")
    op.execute("CREATE INDEX ix_loom_sessions_listing ON loom_sessions (loom_id, date_created DESC, id)")
    op.execute("CREATE INDEX ix_loom_sessions_awaiting ON loom_sessions (loom_id) WHERE awaiting_night")


def downgrade() -> None:
    for table in ("loom_sessions", "night_weavings", "memory_threads", "memory_evidence", "looms"):
        op.execute(f"DROP TABLE {table}")
    op.execute("ALTER TABLE turns DROP COLUMN seq")
    op.execute("ALTER TABLE threads DROP COLUMN last_seq")
