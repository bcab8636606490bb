"""The memory plane (migration 0018): looms, their memory threads, the evidence extraction read,
LoomSessions and night weavings. "Memory thread" keeps these apart from conversation threads.

Public ids are uuids; ``row_id`` is a memory thread's (or session's) number for the stage ledger,
whose subjects are numbered."""

from datetime import datetime
from typing import Any, Final, Literal, get_args
from uuid import UUID

from pgvector.sqlalchemy import Vector
from sqlalchemy import BigInteger, Boolean, Column, Float, Text
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.dialects.postgresql import UUID as PgUUID
from sqlmodel import Field, SQLModel

from models.base import timestamp, utcnow

# The kinds of memory thread: a fact (Semantic), something that happened (Episodic, what night
# weaving writes), and how to do a thing (Procedural).
Kind = Literal["Semantic", "Episodic", "Procedural"]
KINDS: tuple[str, ...] = get_args(Kind)
# How a thread came to be: said by an agent (memory.set), extracted from messages by the LLM,
# woven at night from a session's turns, or reframed from an earlier thread.
BASES = ("Said", "Extracted", "Woven", "Reframed")
WEIGHT_MIN, WEIGHT_MAX = 0.0, 1.0
# How a loom takes what extraction finds: Auto writes memory threads; Suggest proposes them to the
# agent's session (pendingProposals), and the agent weaves those it wants with memory.set.
AUTO: Final = "Auto"
SUGGEST: Final = "Suggest"
WeavingMode = Literal["Auto", "Suggest"]  # AUTO or SUGGEST: a Literal takes no names of constants


def uuids() -> Column:
    return Column(ARRAY(PgUUID(as_uuid=True)), nullable=False, server_default="{}")


def texts() -> Column:
    return Column(ARRAY(Text), nullable=False, server_default="{}")


class Loom(SQLModel, table=True):
    __tablename__ = "looms"

    id: UUID = Field(primary_key=True)
    namespace: str = Field(max_length=128)
    name: str = Field(max_length=128)
    is_default: bool = False
    weaving_mode: str = Field(default=AUTO, max_length=16)
    created_at: datetime = Field(default_factory=utcnow, sa_column=timestamp())


class MemoryThread(SQLModel, table=True):
    __tablename__ = "memory_threads"

    row_id: int | None = Field(default=None, sa_column=Column(BigInteger, unique=True, autoincrement=True))
    id: UUID = Field(primary_key=True)
    loom_id: UUID
    namespace: str = Field(max_length=128)
    content: str = Field(sa_column=Column(Text, nullable=False))
    kind: str = Field(max_length=32)
    weight: float = Field(sa_column=Column(Float, nullable=False))
    subjects: list[str] = Field(default_factory=list, sa_column=texts())
    tags: list[str] = Field(default_factory=list, sa_column=texts())
    cues: list[str] = Field(default_factory=list, sa_column=texts())
    until: datetime | None = Field(default=None, sa_column=timestamp(nullable=True))
    basis: str = Field(max_length=32)
    pinned: bool = Field(default=False, sa_column=Column(Boolean, nullable=False, server_default="false"))
    agent: str | None = Field(default=None, max_length=128)
    run_id: str | None = Field(default=None, max_length=256)
    evidence_ids: list[int] = Field(
        default_factory=list, sa_column=Column(ARRAY(BigInteger), nullable=False, server_default="{}")
    )
    source_key: str | None = Field(default=None, max_length=64)  # an extraction's dedupe key
    # The width is the column's, fixed by the first migration (LOOM_EMBED_DIMENSIONS then): the
    # model reads no settings at import.
    vector: list[float] | None = Field(default=None, sa_column=Column(Vector(), nullable=True))
    model: str | None = Field(default=None, max_length=128)
    digest: str = Field(max_length=64)  # of the text embedded: the embedding run's version
    embedded_at: datetime | None = Field(default=None, sa_column=timestamp(nullable=True))
    embed_error: str | None = Field(default=None, sa_column=Column(Text))
    created_at: datetime = Field(default_factory=utcnow, sa_column=timestamp())
    updated_at: datetime = Field(default_factory=utcnow, sa_column=timestamp())
    cut_at: datetime | None = Field(default=None, sa_column=timestamp(nullable=True))


class MemoryEvidence(SQLModel, table=True):
    """A turn an extraction read, kept whether or not the namespace records transcripts
    (``memory.recall`` reads these)."""

    __tablename__ = "memory_evidence"

    id: int | None = Field(default=None, sa_column=Column(BigInteger, primary_key=True))
    loom_id: UUID
    namespace: str = Field(max_length=128)
    thread_id: str = Field(max_length=256)
    msg_id: str = Field(max_length=128)
    agent: str = Field(max_length=128)
    role: str = Field(max_length=16)
    content: str = Field(sa_column=Column(Text, nullable=False))
    user_id: str | None = Field(default=None, max_length=256)
    run_id: str | None = Field(default=None, max_length=256)
    ts: datetime = Field(sa_column=timestamp())
    sensitivity: str = Field(max_length=16)
    created_at: datetime = Field(default_factory=utcnow, sa_column=timestamp())


class NightWeaving(SQLModel, table=True):
    __tablename__ = "night_weavings"

    id: UUID = Field(primary_key=True)
    loom_id: UUID | None = None  # one loom's, or every loom's
    started_at: datetime = Field(default_factory=utcnow, sa_column=timestamp())
    finished_at: datetime | None = Field(default=None, sa_column=timestamp(nullable=True))
    sessions: int = 0  # sent to be consolidated
    consolidated: int = 0  # of those, consolidated so far
    episodes: int = 0
    judged: int = 0  # memory threads judged: used (reinforced) or unused (decayed)
    used: int = Field(default=0, sa_column_kwargs={"server_default": "0"})  # of those judged
    by: str = Field(max_length=16)  # scheduler | operator


class LoomSession(SQLModel, table=True):
    """One agent's time with a loom in one interaction run, on one conversation thread (its
    turns' sequence is the thread's). The columns are the seed's fields in snake case
    (``ops.schemas.memory.session_object`` serves them by their names)."""

    __tablename__ = "loom_sessions"

    row_id: int | None = Field(default=None, sa_column=Column(BigInteger, unique=True, autoincrement=True))
    id: UUID = Field(primary_key=True)
    loom_id: UUID
    namespace: str = Field(max_length=128)
    thread_id: str = Field(max_length=256)
    run_id: str | None = Field(default=None, max_length=256)
    tenant_id: UUID
    interaction_process_id: UUID
    agent_name: str = Field(max_length=128)
    agent_id: UUID | None = None
    tapestry: str | None = Field(default=None, sa_column=Column(Text))
    tapestry_woven_at: datetime | None = Field(default=None, sa_column=timestamp(nullable=True))
    subjects: list[str] = Field(default_factory=list, sa_column=texts())
    tapestry_thread_ids: list[UUID] = Field(default_factory=list, sa_column=uuids())
    suggested_thread_ids: list[UUID] = Field(default_factory=list, sa_column=uuids())
    held_back_thread_ids: list[UUID] = Field(default_factory=list, sa_column=uuids())
    cued_thread_ids: list[UUID] = Field(default_factory=list, sa_column=uuids())
    held_thread_ids: list[UUID] = Field(default_factory=list, sa_column=uuids())
    pending_gift_thread_ids: list[UUID] = Field(default_factory=list, sa_column=uuids())
    recalled_thread_ids: list[UUID] = Field(default_factory=list, sa_column=uuids())
    woven_thread_ids: list[UUID] = Field(default_factory=list, sa_column=uuids())
    seen_thread_ids: list[UUID] = Field(default_factory=list, sa_column=uuids())
    pending_proposals: list[dict[str, Any]] = Field(
        default_factory=list, sa_column=Column(JSONB, nullable=False, server_default="[]")
    )
    last_turn_at: datetime | None = Field(default=None, sa_column=timestamp(nullable=True))
    last_sequence: int = Field(default=0, sa_column=Column(BigInteger, nullable=False, server_default="0"))
    awaiting_night: bool = False
    consolidated_up_to_sequence: int = Field(
        default=0, sa_column=Column(BigInteger, nullable=False, server_default="0")
    )
    judged_thread_ids: list[UUID] = Field(default_factory=list, sa_column=uuids())
    consolidated_by_night_weaving_id: UUID | None = None
    known_thread_ids: list[UUID] = Field(default_factory=list, sa_column=uuids())
    date_created: datetime = Field(default_factory=utcnow, sa_column=timestamp())
    date_updated: datetime = Field(default_factory=utcnow, sa_column=timestamp())
