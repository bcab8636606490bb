"""The erasure log: every erasure asked for, finished or exported, appended and never changed (the
table refuses UPDATE, DELETE and TRUNCATE, migration 0012), so an operator can show who asked, when,
for what scope, and how many rows it touched."""

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Column
from sqlalchemy.dialects.postgresql import JSONB
from sqlmodel import Field, SQLModel

from models.base import timestamp, utcnow

REQUESTED, FINISHED, EXPORTED = "requested", "finished", "exported"


class ErasureEvent(SQLModel, table=True):
    __tablename__ = "erasure_log"

    id: int | None = Field(default=None, sa_column=Column(BigInteger, primary_key=True))
    erasure_id: int | None = Field(default=None, sa_column=Column(BigInteger, index=True))  # its request
    event: str = Field(max_length=16)  # REQUESTED, FINISHED or EXPORTED
    actor: str = Field(max_length=128)  # who asked: "operator", or "token <id>"
    scope: dict[str, Any] = Field(default_factory=dict, sa_column=Column("scope", JSONB, nullable=False))
    rows: dict[str, Any] | None = Field(default=None, sa_column=Column("rows", JSONB))
    at: datetime = Field(default_factory=utcnow, sa_column=timestamp())
