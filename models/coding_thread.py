"""Coding-session threads on the server (migration 0022): the body as the client sent it (the
shared ``loom.threads.Thread``) and the columns the server reads."""

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Column, Text
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlmodel import Field, SQLModel

from models.base import timestamp


class CodingThread(SQLModel, table=True):
    __tablename__ = "coding_threads"

    row_id: int | None = Field(default=None, sa_column=Column(BigInteger, unique=True, autoincrement=True))
    id: str = Field(primary_key=True, max_length=40)
    namespace: str = Field(max_length=128)
    owner: str = Field(max_length=256)  # the owning token's user id; "" for the namespace itself
    version: int = Field(sa_column=Column(BigInteger, nullable=False))
    visibility: str = Field(max_length=16)
    is_shared_with_support: bool
    title: str | None = Field(default=None, sa_column=Column(Text))
    git_branch: str | None = Field(default=None, sa_column=Column(Text))
    git_remote_url: str | None = Field(default=None, sa_column=Column(Text))
    git_commits: list[str] = Field(default_factory=list, sa_column=Column(ARRAY(Text), nullable=False))
    message_count: int
    indexed_count: int = 0
    created_at: datetime = Field(sa_column=timestamp())
    updated_at: datetime = Field(sa_column=timestamp())
    last_activity_at: datetime = Field(sa_column=timestamp())
    body: dict[str, Any] = Field(sa_column=Column(JSONB, nullable=False))
    search_text: str = Field(sa_column=Column(Text, nullable=False))
