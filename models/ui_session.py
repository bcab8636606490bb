"""A dashboard sign-in (``ui.sessions``): only hashes of the session id and of the token."""

from datetime import datetime

from sqlmodel import Field, SQLModel

from models.base import timestamp


class UiSession(SQLModel, table=True):
    __tablename__ = "ui_sessions"

    id_hash: str = Field(primary_key=True, max_length=64)
    token_hash: str = Field(max_length=64)
    csrf: str = Field(max_length=64)
    created_at: datetime = Field(sa_column=timestamp())
    expires_at: datetime = Field(sa_column=timestamp())
