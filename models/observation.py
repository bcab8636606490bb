"""Observations (migration 0035): a coding agent's tool actions, one row each, recorded by the
client's hooks (``observe.record``) and made into Episodic memory threads of their session by the
extraction stage (``observe.crystallize``). Screened at write; one that reads as high is kept and
never sent to a model nor written into a memory."""

from datetime import datetime

from sqlalchemy import BigInteger, Column, Text
from sqlmodel import Field, SQLModel

from models.base import timestamp, utcnow
from models.memory import texts

OUTCOMES = ("ok", "error")
SUMMARY_MAX, ERROR_MAX, FILES_MAX, FILE_MAX = 200, 2_000, 32, 512


class Observation(SQLModel, table=True):
    __tablename__ = "observations"

    id: int | None = Field(default=None, sa_column=Column(BigInteger, primary_key=True))
    namespace: str = Field(max_length=128)
    session_id: str = Field(max_length=256)  # the client's session
    action_key: str = Field(max_length=128)  # the client's id for the action, else a digest of it
    run_id: str | None = Field(default=None, max_length=256)
    agent: str = Field(max_length=128)
    user_id: str | None = Field(default=None, max_length=256)
    project: str | None = Field(default=None, max_length=128)
    branch: str | None = Field(default=None, max_length=128)
    tool: str = Field(max_length=128)
    input_sha256: str = Field(max_length=64)
    summary: str = Field(max_length=SUMMARY_MAX)  # one line: the command, or the file path
    outcome: str = Field(max_length=16)
    files: list[str] = Field(default_factory=list, sa_column=texts())
    error: str | None = Field(default=None, sa_column=Column(Text))
    sensitivity: str = Field(max_length=16)
    ts: datetime = Field(sa_column=timestamp())
    crystallized_at: datetime | None = Field(default=None, sa_column=timestamp(nullable=True))
    created_at: datetime = Field(default_factory=utcnow, sa_column=timestamp())
