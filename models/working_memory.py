"""Working memory (migration 0034): the "where was I" block of one line of work, one per namespace,
user, project and branch ('' where none), at most 4,000 characters, written whole by the plugins
and agents, every revision kept. Screened at write; never embedded, never part of recall or
search: it is read by name (``ops.working_memory``)."""

from datetime import datetime

from sqlalchemy import BigInteger, Column, Text
from sqlmodel import Field, SQLModel

from models.base import timestamp, utcnow

CONTENT_MAX = 4_000


class WorkingMemory(SQLModel, table=True):
    __tablename__ = "working_memory"

    id: int | None = Field(default=None, sa_column=Column(BigInteger, primary_key=True))
    namespace: str = Field(max_length=128)
    user_id: str = Field(default="", max_length=256)  # '': the block of no one user
    project: str = Field(default="", max_length=128)
    branch: str = Field(default="", max_length=128)
    content: str = Field(sa_column=Column(Text, nullable=False))
    sensitivity: str = Field(max_length=16)  # the screen's verdict on the content
    revision: int = 1
    session_id: str | None = Field(default=None, max_length=256)  # of the newest revision
    written_by: str = Field(max_length=64)
    created_at: datetime = Field(default_factory=utcnow, sa_column=timestamp())
    updated_at: datetime = Field(default_factory=utcnow, sa_column=timestamp())


class WorkingMemoryRevision(SQLModel, table=True):
    __tablename__ = "working_memory_revisions"

    id: int | None = Field(default=None, sa_column=Column(BigInteger, primary_key=True))
    block_id: int = Field(sa_column=Column(BigInteger, nullable=False))
    revision: int
    content: str = Field(sa_column=Column(Text, nullable=False))
    sensitivity: str = Field(max_length=16)
    session_id: str | None = Field(default=None, max_length=256)
    written_by: str = Field(max_length=64)
    created_at: datetime = Field(default_factory=utcnow, sa_column=timestamp())
