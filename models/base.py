"""Column helpers shared by the tables."""

from datetime import UTC, datetime
from typing import TypeVar

from sqlalchemy import Column, DateTime
from sqlalchemy.dialects.postgresql import JSONB


def utcnow() -> datetime:
    # Python's clock, not the server's, so freezegun moves every timestamp Loom writes.
    return datetime.now(UTC)


def timestamp(nullable: bool = False, index: bool = False) -> Column:
    return Column(DateTime(timezone=True), nullable=nullable, index=index)


def jsonb(name: str = "metadata") -> Column:
    return Column(name, JSONB, nullable=False, server_default="{}")


K = TypeVar("K")


def stored(key: K | None) -> K:
    """The key of a stored row: the database set it when the row was flushed (a table's ``id``
    is ``None`` in its type only until then)."""
    assert key is not None, "the row was not stored"
    return key
