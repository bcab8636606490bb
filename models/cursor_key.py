"""The keys cursors are signed with (``ops.cursors``): random secrets every API process reads from
here, so a cursor one process issued pages on any other. The newest signs; it and the one before
it are accepted; a rotation adds a key and drops the rest."""

from datetime import datetime

from sqlalchemy import Column, LargeBinary
from sqlmodel import Field, SQLModel

from models.base import timestamp

KEY_BYTES = 32  # HMAC-SHA256's block is 64 bytes; 32 random bytes is its full strength


class CursorKey(SQLModel, table=True):
    __tablename__ = "cursor_keys"

    id: int | None = Field(default=None, primary_key=True)  # named in each cursor it signs
    secret: bytes = Field(sa_column=Column(LargeBinary, nullable=False))
    created_at: datetime = Field(sa_column=timestamp())
