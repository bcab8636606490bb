"""Namespaces (the recording switch) and the bearer tokens that reach them."""

import unicodedata
from datetime import datetime

from sqlalchemy import ARRAY, Column, Text
from sqlmodel import Field, SQLModel

from models.base import timestamp, utcnow

ROLES = ("viewer", "writer", "admin")
NAME_MAX = 128


def name_problem(name: str) -> str | None:
    """The one namespace rule, for ops and for minting tokens: 1-128 characters, none of them a
    control, format or unassigned character, no space at either end."""
    if not 1 <= len(name) <= NAME_MAX:
        return f"must be 1 to {NAME_MAX} characters"
    if name != name.strip():
        return "must not start or end with whitespace"
    if any(unicodedata.category(c).startswith("C") for c in name):
        return "must not contain control, format or unassigned characters"
    return None


def role_rank(role: str) -> int:
    return ROLES.index(role)


class Namespace(SQLModel, table=True):
    __tablename__ = "namespaces"

    name: str = Field(primary_key=True, max_length=NAME_MAX)
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
    # Every namespace, present and future (namespaces then empty): the operator's token.
    all_namespaces: bool = Field(default=False, sa_column_kwargs={"server_default": "false"})
    created_at: datetime = Field(default_factory=utcnow, sa_column=timestamp())
    revoked_at: datetime | None = Field(default=None, sa_column=timestamp(nullable=True))
    # namespace (a service token), own_user (an end user's: the saved-message ops only, as
    # read_user_id when set) or own_session (refused by the conversation ops; pinned to
    # read_session_id when set). See ops.caller.
    read_scope: str = Field(
        default="namespace", max_length=16, sa_column_kwargs={"server_default": "namespace"}
    )
    read_user_id: str | None = Field(default=None, max_length=256)
    read_session_id: str | None = Field(default=None, max_length=256)
    # The user the token speaks for, whatever its read scope: the owner of the coding-session
    # threads it writes (read_user_id stands in when this is unset). It bounds no read.
    user_id: str | None = Field(default=None, max_length=256)
