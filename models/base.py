"""Column helpers shared by the tables."""

from datetime import UTC, datetime

from sqlalchemy import Column, DateTime
from sqlalchemy.dialects.postgresql import JSONB


def utcnow() -> datetime:
    # Python's clock, not the server's, so freezegun moves every timestamp Loom writes.
    return datetime.now(UTC)


def timestamp(nullable: bool = False, index: bool = False) -> Column:
    return Column(DateTime(timezone=True), nullable=nullable, index=index)


def jsonb(name: str = "metadata") -> Column:
    return Column(name, JSONB, nullable=False, server_default="{}")
