"""Namespaces (the recording switch) and the bearer tokens that reach them."""

from datetime import datetime

from sqlalchemy import ARRAY, Column, Text
from sqlmodel import Field, SQLModel

from models.base import timestamp, utcnow

ROLES = ("viewer", "writer", "admin")


def role_rank(role: str) -> int:
    return ROLES.index(role)


class Namespace(SQLModel, table=True):
    __tablename__ = "namespaces"

    name: str = Field(primary_key=True, max_length=128)
    # Off by default and failing closed: a namespace with no row does not record either.
    conversation_logging_enabled: bool = Field(default=False)
    created_at: datetime = Field(default_factory=utcnow, sa_column=timestamp())
    updated_at: datetime = Field(default_factory=utcnow, sa_column=timestamp())


class ApiToken(SQLModel, table=True):
    __tablename__ = "api_tokens"

    id: int | None = Field(default=None, primary_key=True)
    token_hash: str = Field(unique=True, max_length=64)  # sha256 hex; the token itself is never kept
    role: str = Field(max_length=16)
    namespaces: list[str] = Field(sa_column=Column(ARRAY(Text), nullable=False))
    created_at: datetime = Field(default_factory=utcnow, sa_column=timestamp())
    revoked_at: datetime | None = Field(default=None, sa_column=timestamp(nullable=True))
