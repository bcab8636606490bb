"""Transcripts handed over whole (conversation.ingest): kept raw, so the ingest stage parses them
after the answer, and an operator's retry re-runs one from the same text after a parser fix."""

from datetime import datetime

from sqlalchemy import BigInteger, Column, Index, Text
from sqlmodel import Field, SQLModel

from models.base import timestamp, utcnow


class Transcript(SQLModel, table=True):
    __tablename__ = "transcripts"
    __table_args__ = (
        # The same file handed over twice for the same thread and agent is one transcript.
        Index("ux_transcripts_content", "namespace", "thread_id", "agent", "digest", unique=True),
    )

    id: int | None = Field(default=None, sa_column=Column(BigInteger, primary_key=True))
    namespace: str = Field(max_length=128)
    thread_id: str = Field(max_length=256)
    agent: str = Field(max_length=128)
    source: str | None = Field(default=None, max_length=256)  # the file's name, for messages
    raw: str = Field(sa_column=Column(Text, nullable=False))
    first_line: int = 1  # a piece of a JSON-lines session file: the file's line it starts at
    digest: str = Field(max_length=64)
    size_bytes: int
    created_at: datetime = Field(default_factory=utcnow, sa_column=timestamp())
