"""Session briefs (migration 0021): the resumable state of one line of work, every revision kept,
and the saves that revise one: a save of events is cut into windows, each condensed by one
``brief_window`` stage run, in order."""

from datetime import datetime
from typing import Any, Final

from sqlalchemy import BigInteger, Column, Text
from sqlalchemy.dialects.postgresql import JSONB
from sqlmodel import Field, SQLModel

from models.base import timestamp, utcnow

# Who wrote a revision: the model (LLM) from events, the deterministic builder from events, or the
# calling agent, whose sections are taken as they are ("model" in the document's words).
LLM, DETERMINISTIC, AGENT = "llm", "deterministic", "model"
# A save's and a window's course.
PENDING: Final = "pending"
REVISED: Final = "revised"
FAILED: Final = "failed"
NOT_REVISED: Final = "not-revised"


def jsonb_column(default: str) -> Column:
    return Column(JSONB, nullable=False, server_default=default)


class SessionBrief(SQLModel, table=True):
    __tablename__ = "session_briefs"

    id: int | None = Field(default=None, sa_column=Column(BigInteger, primary_key=True))
    namespace: str = Field(max_length=128)
    brief_key: str = Field(max_length=2048)  # as stored: a bounded token's prefix included (escaped ids)
    project: str | None = Field(default=None, max_length=128)
    branch: str | None = Field(default=None, max_length=128)
    revision: int = 0  # 0: made by a save whose windows have not revised it yet
    sections: dict[str, Any] = Field(default_factory=dict, sa_column=jsonb_column("'{}'"))
    author: str | None = Field(default=None, max_length=16)
    session_id: str | None = Field(default=None, max_length=256)  # the session of the newest revision
    written_by: str = Field(max_length=64)  # the caller that made it (mine_only lists by it)
    client_summary: str | None = Field(default=None, sa_column=Column(Text))  # full=true appends it
    last_save_id: int | None = Field(default=None, sa_column=Column(BigInteger))
    created_at: datetime = Field(default_factory=utcnow, sa_column=timestamp())
    updated_at: datetime = Field(default_factory=utcnow, sa_column=timestamp())


class BriefRevision(SQLModel, table=True):
    __tablename__ = "session_brief_revisions"

    id: int | None = Field(default=None, sa_column=Column(BigInteger, primary_key=True))
    brief_id: int = Field(sa_column=Column(BigInteger, nullable=False))
    revision: int
    sections: dict[str, Any] = Field(default_factory=dict, sa_column=jsonb_column("'{}'"))
    author: str = Field(max_length=16)
    session_id: str | None = Field(default=None, max_length=256)
    save_id: int | None = Field(default=None, sa_column=Column(BigInteger))
    created_at: datetime = Field(default_factory=utcnow, sa_column=timestamp())


class BriefSave(SQLModel, table=True):
    __tablename__ = "session_brief_saves"

    id: int | None = Field(default=None, sa_column=Column(BigInteger, primary_key=True))
    brief_id: int = Field(sa_column=Column(BigInteger, nullable=False))
    session_id: str | None = Field(default=None, max_length=256)
    event_cursor: str | None = Field(default=None, max_length=256)
    author: str = Field(max_length=16)  # who revises it: llm, deterministic (windows) or model
    status: str = Field(default=PENDING, max_length=16)
    windows: int = 0
    created_at: datetime = Field(default_factory=utcnow, sa_column=timestamp())
    finished_at: datetime | None = Field(default=None, sa_column=timestamp(nullable=True))


class BriefWindow(SQLModel, table=True):
    """One window of a save's events (screened), condensed by one ``brief_window`` run."""

    __tablename__ = "session_brief_windows"

    id: int | None = Field(default=None, sa_column=Column(BigInteger, primary_key=True))
    save_id: int = Field(sa_column=Column(BigInteger, nullable=False))
    position: int  # 0, 1, …: the order the windows revise the brief in
    events: list[dict[str, Any]] = Field(default_factory=list, sa_column=jsonb_column("'[]'"))
    status: str = Field(default=PENDING, max_length=16)
    revision: int | None = None  # the revision it wrote
    error: str | None = Field(default=None, sa_column=Column(Text))
