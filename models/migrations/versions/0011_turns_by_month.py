"""turns partitioned by month of ts; turn_keys keeps a message's copy unique across partitions;
embedding rows no longer cascade from turns

Expiring a month of transcript (LOOM_RETENTION_CONVERSATIONS_DAYS) is then dropping a partition,
not a long delete. PostgreSQL requires a partitioned table's unique index to include the
partition key, so (namespace, thread_id, agent, msg_id) is kept unique in turn_keys, which the
write path inserts into first: a turn re-sent with another ts is still a duplicate. Embedding rows
have no TTL: their foreign key to turns (ON DELETE CASCADE) is dropped, so dropping a partition
leaves them.

Revision ID: 0011
"""

from datetime import UTC, datetime

from alembic import op
from sqlalchemy import text

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

TURN_INDEXES = (
    "CREATE INDEX ix_turns_agent ON turns (agent)",
    "CREATE INDEX ix_turns_run_id ON turns (run_id)",
    "CREATE INDEX ix_turns_thread_id ON turns (namespace, thread_id, id)",
    "CREATE INDEX ix_turns_thread_ts_id ON turns (namespace, thread_id, ts, id)",
    "CREATE INDEX ix_turns_screened_with ON turns (screened_with, id)",
    "CREATE INDEX ix_turns_ts ON turns (ts)",  # a trim of the month the TTL's cutoff falls in
    "CREATE INDEX ix_turns_content_trgm ON turns USING gin (content gin_trgm_ops) "
    "WHERE role IN ('user', 'assistant') AND deleted_at IS NULL AND sensitivity <> 'high'",
)
MONTHS_AHEAD = 2


def _months_to_create() -> list[datetime]:
    """Every month a stored turn falls in, and this month and the next ones."""
    rows = op.get_bind().execute(
        text("SELECT DISTINCT date_trunc('month', ts, 'UTC') FROM turns_unpartitioned")
    )
    months = {row[0].astimezone(UTC) for row in rows}
    now = datetime.now(UTC)
    for ahead in range(MONTHS_AHEAD + 1):
        year, month = divmod(now.month - 1 + ahead, 12)
        months.add(datetime(now.year + year, month + 1, 1, tzinfo=UTC))
    return sorted(months)


def _next(month: datetime) -> datetime:
    return month.replace(year=month.year + month.month // 12, month=month.month % 12 + 1)


def upgrade() -> None:
    op.execute("ALTER TABLE turns RENAME TO turns_unpartitioned")
    op.execute("ALTER TABLE turns_unpartitioned RENAME CONSTRAINT turns_pkey TO turns_unpartitioned_pkey")
    op.execute(
        "CREATE TABLE turns (LIKE turns_unpartitioned INCLUDING DEFAULTS INCLUDING STORAGE) "
        "PARTITION BY RANGE (ts)"
    )
    op.execute("ALTER TABLE turns ADD CONSTRAINT turns_pkey PRIMARY KEY (id, ts)")
    for month in _months_to_create():
        op.execute(
            f"CREATE TABLE turns_p{month:%Y_%m} PARTITION OF turns "
            f"FOR VALUES FROM ('{month.isoformat()}') TO ('{_next(month).isoformat()}')"
        )
    op.execute("INSERT INTO turns SELECT * FROM turns_unpartitioned")

    op.execute("""
        CREATE TABLE turn_keys (
            namespace varchar(128) NOT NULL,
            thread_id varchar(256) NOT NULL,
            agent varchar(128) NOT NULL,
            msg_id varchar(128) NOT NULL,
            turn_id bigint NOT NULL,
            ts timestamptz NOT NULL,
            CONSTRAINT turn_keys_pkey PRIMARY KEY (namespace, thread_id, agent, msg_id)
        )
    """)
    op.execute("CREATE INDEX ix_turn_keys_ts ON turn_keys (ts)")  # retention drops a month's keys
    op.execute(
        "INSERT INTO turn_keys SELECT namespace, thread_id, agent, msg_id, id, ts FROM turns_unpartitioned"
    )

    op.execute("ALTER TABLE embeddings DROP CONSTRAINT embeddings_turn_id_fkey")
    op.execute("ALTER SEQUENCE turns_id_seq OWNED BY turns.id")  # before the old owner is dropped
    op.execute("DROP TABLE turns_unpartitioned")
    for statement in TURN_INDEXES:
        op.execute(statement)


def downgrade() -> None:
    op.execute("ALTER TABLE turns RENAME TO turns_partitioned")
    op.execute("CREATE TABLE turns (LIKE turns_partitioned INCLUDING DEFAULTS INCLUDING STORAGE)")
    op.execute("INSERT INTO turns SELECT * FROM turns_partitioned")
    op.execute("ALTER SEQUENCE turns_id_seq OWNED BY turns.id")
    op.execute("DROP TABLE turns_partitioned")  # and its partitions
    op.execute("DROP TABLE turn_keys")
    op.execute("ALTER TABLE turns ADD CONSTRAINT turns_pkey PRIMARY KEY (id)")
    op.execute(
        "ALTER TABLE turns ADD CONSTRAINT uq_turns_agent_msg UNIQUE (namespace, thread_id, agent, msg_id)"
    )
    for statement in TURN_INDEXES:
        op.execute(statement)
    op.execute(
        "DELETE FROM embeddings e WHERE NOT EXISTS (SELECT FROM turns t WHERE t.id = e.turn_id)"
    )  # rows whose turn expired cannot keep a foreign key
    op.execute(
        "ALTER TABLE embeddings ADD CONSTRAINT embeddings_turn_id_fkey "
        "FOREIGN KEY (turn_id) REFERENCES turns(id) ON DELETE CASCADE"
    )
