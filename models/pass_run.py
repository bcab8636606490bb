"""The last firing of each periodic pass, by the scheduler or an operator (`loom passes list`)."""

from datetime import datetime

from sqlalchemy import Column, Text
from sqlmodel import Field, SQLModel

from models.base import timestamp


class PassRun(SQLModel, table=True):
    __tablename__ = "pass_runs"

    name: str = Field(primary_key=True, max_length=64)
    started_at: datetime = Field(sa_column=timestamp())
    finished_at: datetime | None = Field(default=None, sa_column=timestamp(nullable=True))
    sent: int | None = None  # stage runs the pass enqueued
    error: str | None = Field(default=None, sa_column=Column(Text))
    by: str = Field(max_length=16)  # scheduler | operator
