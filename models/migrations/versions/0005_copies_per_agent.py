"""Copies per agent: several agents of one thread each keep their own copy of a message, sharing
one embedding row while their text is the same; tombstones on threads and embedding rows; embedding
runs keyed by their embedding row

- turns: unique on (namespace, thread_id, agent, msg_id), the idempotency key per agent (a later
  partitioning of turns must keep these columns in its key, or the key stops holding across
  partitions); indexed by (namespace, thread_id, id) for paging and the last-turn queries.
- embeddings: ``deleted_at``; at most one live row per (namespace, thread_id, msg_id, digest):
  a second agent's copy of the same text shares the first one's row. The row names the copy it
  serves (``turn_id``) and passes to another live copy when that one is deleted or compacted.
- threads: ``deleted_at`` (conversation.delete).
- stage_runs: an embedding run's subject is its embedding row (``embedding:<id>``), not the turn,
  since the row can pass from copy to copy; its key is ``embedding:<id>:<digest prefix>``. Runs
  whose row is gone keep no subject to work on (``embedding:0``, skipped when claimed).

Revision ID: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_constraint("turns_namespace_thread_id_msg_id_key", "turns", type_="unique")
    op.create_unique_constraint("uq_turns_agent_msg", "turns", ["namespace", "thread_id", "agent", "msg_id"])
    op.drop_index("ix_turns_thread_ts", table_name="turns")
    op.create_index("ix_turns_thread_id", "turns", ["namespace", "thread_id", "id"])
    op.add_column("threads", sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("embeddings", sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index(
        "ux_embeddings_shared",
        "embeddings",
        ["namespace", "thread_id", "msg_id", "digest"],
        unique=True,
        postgresql_where=sa.text("deleted_at IS NULL"),
    )
    op.execute(
        "UPDATE stage_runs r SET subject = 'embedding:' || e.id, "
        "idem_key = 'embedding:' || e.id || ':' || left(e.digest, 16) "
        "FROM embeddings e WHERE r.stage = 'embedding' AND r.subject = 'turn:' || e.turn_id"
    )
    op.execute(
        "UPDATE stage_runs SET subject = 'embedding:0' WHERE stage = 'embedding' AND subject LIKE 'turn:%'"
    )


def downgrade() -> None:
    op.execute(
        "UPDATE stage_runs r SET subject = 'turn:' || e.turn_id, "
        "idem_key = 'embed:' || e.turn_id || ':' || left(e.digest, 16) "
        "FROM embeddings e WHERE r.stage = 'embedding' AND r.subject = 'embedding:' || e.id"
    )
    op.drop_index("ux_embeddings_shared", table_name="embeddings")
    op.drop_column("embeddings", "deleted_at")
    op.drop_column("threads", "deleted_at")
    op.drop_index("ix_turns_thread_id", table_name="turns")
    op.create_index("ix_turns_thread_ts", "turns", ["namespace", "thread_id", "ts"])
    op.drop_constraint("uq_turns_agent_msg", "turns", type_="unique")
    op.create_unique_constraint(
        "turns_namespace_thread_id_msg_id_key", "turns", ["namespace", "thread_id", "msg_id"]
    )
