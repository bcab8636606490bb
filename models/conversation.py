"""The conversation plane: threads, their verbatim turns, and the turns' embedding rows."""

from datetime import datetime
from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import BigInteger, Boolean, Column, Index, SmallInteger, Text, UniqueConstraint
from sqlalchemy import text as sql
from sqlmodel import Field, SQLModel

from models.base import jsonb, timestamp, utcnow

TURN_ROLES = ("user", "assistant", "system", "tool")
EMBEDDED_ROLES = ("user", "assistant")
MSG_ID_MAX = 128


class Thread(SQLModel, table=True):
    """A conversation thread. Only the named SQL reads ``said_msg_id``, ``said_lexemes`` and
    ``said_context`` (migration 0032): its latest said turn, of which the append gives the next
    one its lexical context (``models.queries.turns.APPEND_TURN``, ``pipelines.contexts``)."""

    __tablename__ = "threads"
    __table_args__ = (
        UniqueConstraint("namespace", "thread_id"),
        Index("ix_threads_namespace_last_turn", "namespace", "last_turn_at"),
    )

    id: int | None = Field(default=None, primary_key=True)
    namespace: str = Field(max_length=128)
    thread_id: str = Field(max_length=256)
    agent: str = Field(max_length=128)  # the agent that opened the thread
    title: str | None = None
    meta: dict[str, Any] = Field(default_factory=dict, sa_column=jsonb())
    run_id: str | None = Field(default=None, max_length=256)
    turn_count: int = 0
    # The sequence number of the thread's last written turn (``Turn.seq``), taken under its lock.
    last_seq: int = Field(default=0, sa_column=Column(BigInteger, nullable=False, server_default="0"))
    created_at: datetime = Field(default_factory=utcnow, sa_column=timestamp())
    last_turn_at: datetime = Field(default_factory=utcnow, sa_column=timestamp())  # never moves back
    deleted_at: datetime | None = Field(default=None, sa_column=timestamp(nullable=True))


class Turn(SQLModel, table=True):
    """One agent's copy of a message: each agent of a thread logs its own (migration 0005).

    Partitioned by month of ``ts`` (migration 0011; ``models.partitions``), so the retention TTL
    drops a month at once; its primary key is (id, ts) there, ids coming from one sequence. A copy
    is unique by ``TurnKey``, which every write inserts first. Only the named SQL reads its
    tsvectors: ``lexemes`` and ``lexical_length`` (generated, migration 0013), ``context_lexemes``
    and ``context_length`` (its lexical context, migration 0032, ``pipelines.contexts``)."""

    __tablename__ = "turns"
    __table_args__ = (
        Index("ix_turns_thread_id", "namespace", "thread_id", "id"),
        Index("ix_turns_thread_ts_id", "namespace", "thread_id", "ts", "id"),  # the reading order
        Index("ix_turns_screened_with", "screened_with", "id"),
        Index("ix_turns_ts", "ts"),
        Index("ix_turns_user", "namespace", "user_id", postgresql_where=sql("user_id IS NOT NULL")),
        Index(
            "ix_turns_saved",
            "namespace",
            "user_id",
            sql("saved_at DESC"),
            sql("id DESC"),
            postgresql_where=sql("is_saved"),
        ),
    )

    id: int | None = Field(default=None, sa_column=Column(BigInteger, primary_key=True))
    namespace: str = Field(max_length=128)
    thread_id: str = Field(max_length=256)
    agent: str = Field(max_length=128, index=True)
    msg_id: str = Field(max_length=MSG_ID_MAX)
    role: str = Field(max_length=16)
    content: str = Field(sa_column=Column(Text, nullable=False))
    reasoning: str | None = Field(default=None, sa_column=Column(Text))
    name: str | None = Field(default=None, max_length=128)  # the speaker's, where a role is shared
    user_id: str | None = Field(default=None, max_length=256)
    run_id: str | None = Field(default=None, max_length=256, index=True)
    meta: dict[str, Any] = Field(default_factory=dict, sa_column=jsonb())
    tokens: int | None = None
    sensitivity: str = Field(max_length=8)  # the screening verdict: high | none
    # The version of the rules (pipelines.screening.RULES_VERSION) that gave it: the re-screening
    # stage judges turns of an older version again.
    screened_with: int = Field(default=0, sa_column=Column(SmallInteger, nullable=False, server_default="0"))
    ts: datetime = Field(default_factory=utcnow, sa_column=timestamp())
    # Its place in the thread's writing order (1, 2, …; none before migration 0018): what a
    # LoomSession's lastSequence and consolidatedUpToSequence count.
    seq: int | None = Field(default=None, sa_column=Column(BigInteger, nullable=True))
    deleted_at: datetime | None = Field(default=None, sa_column=timestamp(nullable=True))
    # conversation.save_message's flag (pipelines.saving): saved by its owner, ``user_id``.
    is_saved: bool = Field(default=False, sa_column=Column(Boolean, nullable=False, server_default="false"))
    saved_at: datetime | None = Field(default=None, sa_column=timestamp(nullable=True))
    # Written by a save into a namespace that does not record: unsaving removes it.
    stored_by_save: bool = Field(
        default=False, sa_column=Column(Boolean, nullable=False, server_default="false")
    )


class TurnKey(SQLModel, table=True):
    """What keeps an agent's copy of a message unique across the partitions of ``turns`` (a
    partitioned table's unique index must hold its partition key): the write path inserts the key
    first, so a copy re-sent with another ts is still a duplicate. Kept after the retention TTL
    dropped its turn (until the keys of that month are cleared), so a late re-send of an expired
    turn is a duplicate rather than a new old turn."""

    __tablename__ = "turn_keys"
    __table_args__ = (Index("ix_turn_keys_ts", "ts"),)

    namespace: str = Field(max_length=128, primary_key=True)
    thread_id: str = Field(max_length=256, primary_key=True)
    agent: str = Field(max_length=128, primary_key=True)
    msg_id: str = Field(max_length=MSG_ID_MAX, primary_key=True)
    turn_id: int = Field(sa_column=Column(BigInteger, nullable=False))
    ts: datetime = Field(sa_column=timestamp())


class Embedding(SQLModel, table=True):
    """One live row per message text of a thread, shared by every agent's copy of that text; it
    serves (``turn_id``, ``agent``) one of them and passes to another when that copy is deleted or
    compacted. ``vector`` is null while pending or after a failed embed (``error`` says why), so a
    failed turn is still visible to operators and to the substring fallback."""

    __tablename__ = "embeddings"
    __table_args__ = (
        Index(
            "ux_embeddings_shared",
            "namespace",
            "thread_id",
            "msg_id",
            "digest",
            unique=True,
            postgresql_where=sql("deleted_at IS NULL"),
        ),
        Index("ix_embeddings_user", "namespace", "user_id", postgresql_where=sql("user_id IS NOT NULL")),
        Index(
            "ix_embeddings_saved",
            "namespace",
            "user_id",
            postgresql_where=sql("is_saved AND deleted_at IS NULL"),
        ),
        # A search's scope counted from the index alone (pipelines.search.by_vector).
        Index(
            "ix_embeddings_scope",
            "namespace",
            "model",
            "thread_id",
            postgresql_include=["role", "run_id"],
            postgresql_where=sql("deleted_at IS NULL AND vector IS NOT NULL"),
        ),
    )

    id: int | None = Field(default=None, sa_column=Column(BigInteger, primary_key=True))
    # No foreign key: an embedding row has no TTL and outlives a turn the retention TTL expired.
    turn_id: int = Field(sa_column=Column(BigInteger, unique=True, nullable=False))
    namespace: str = Field(max_length=128, index=True)
    thread_id: str = Field(max_length=256)
    agent: str = Field(max_length=128)
    msg_id: str = Field(max_length=MSG_ID_MAX)
    role: str = Field(max_length=16)
    run_id: str | None = Field(default=None, max_length=256)
    user_id: str | None = Field(default=None, max_length=256)
    text: str = Field(sa_column=Column(Text, nullable=False))  # what the vector is built from
    digest: str = Field(max_length=64)
    model: str | None = Field(default=None, max_length=128)
    # The width is the column's, fixed by the first migration (LOOM_EMBED_DIMENSIONS then): the
    # model reads no settings at import.
    vector: list[float] | None = Field(default=None, sa_column=Column(Vector(), nullable=True))
    error: str | None = Field(default=None, sa_column=Column(Text))
    created_at: datetime = Field(default_factory=utcnow, sa_column=timestamp())
    embedded_at: datetime | None = Field(default=None, sa_column=timestamp(nullable=True))
    deleted_at: datetime | None = Field(default=None, sa_column=timestamp(nullable=True))
    # The flags of the turn it serves: its owner (``user_id``) saved the message.
    is_saved: bool = Field(default=False, sa_column=Column(Boolean, nullable=False, server_default="false"))
    saved_at: datetime | None = Field(default=None, sa_column=timestamp(nullable=True))
