"""The stage ledger: one row per run of a stage on a subject."""

from datetime import datetime
from typing import Any, Final, Literal, get_args

from sqlalchemy import BigInteger, Column, ColumnClause, Index, Text, func, literal_column, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlmodel import Field, SQLModel, col

from models.base import jsonb, timestamp, utcnow

PENDING: Final = "pending"
RUNNING: Final = "running"
SUCCEEDED: Final = "succeeded"
SKIPPED: Final = "skipped"
FAILED: Final = "failed"
# The statuses again, as a type: a Literal takes no names of constants.
Status = Literal["pending", "running", "succeeded", "skipped", "failed"]
STATUSES: tuple[str, ...] = get_args(Status)
DONE = (SUCCEEDED, SKIPPED)
HISTORY_KEPT = 50  # failed attempts a run keeps: operators' re-runs add attempts without end


class StageRun(SQLModel, table=True):
    __tablename__ = "stage_runs"
    __table_args__ = (
        Index("ix_stage_runs_status_stage", "status", "stage"),
        Index("ix_stage_runs_subject", "stage", "subject", "created_at"),  # a subject's runs
        # The sweep's and the batch claim's scan: only live runs, oldest first.
        Index(
            "ix_stage_runs_live",
            "stage",
            "updated_at",
            postgresql_where=text("status IN ('pending', 'running')"),
        ),
    )

    id: int | None = Field(default=None, sa_column=Column(BigInteger, primary_key=True))
    stage: str = Field(max_length=32)
    subject: str = Field(max_length=256)  # e.g. "turn:42"
    # One row per key for good: a retry revives the same row, so a key can never run twice at once.
    idem_key: str = Field(max_length=256, unique=True)
    status: str = Field(default=PENDING, max_length=16)
    attempts: int = 0
    last_error: str | None = Field(default=None, sa_column=Column(Text))  # the latest attempt's error
    # Each failed attempt: {"attempt": n, "at": time, "error": text}, oldest first, the latest
    # HISTORY_KEPT kept (``workers.ledger.claims``). Kept through an operator's re-run.
    history: list[dict[str, Any]] = Field(
        default_factory=list,
        sa_column=Column("history", JSONB, nullable=False, server_default="[]"),
    )
    reason: str | None = Field(default=None, max_length=64)  # why a run was skipped
    created_at: datetime = Field(default_factory=utcnow, sa_column=timestamp())
    updated_at: datetime = Field(default_factory=utcnow, sa_column=timestamp())
    started_at: datetime | None = Field(default=None, sa_column=timestamp(nullable=True))
    finished_at: datetime | None = Field(default=None, sa_column=timestamp(nullable=True))
    lease_expires_at: datetime | None = Field(default=None, sa_column=timestamp(nullable=True))
    # A pending run is claimable from this time on: its backoff after a failed attempt.
    available_at: datetime = Field(default_factory=utcnow, sa_column=timestamp())
    # The token of the claim that holds a running run (``workers.ledger.claim``).
    claim: str | None = Field(default=None, max_length=32)
    params: dict[str, Any] = Field(default_factory=dict, sa_column=jsonb("params"))  # what it was asked
    result: dict[str, Any] | None = Field(default=None, sa_column=Column("result", JSONB, nullable=True))


def with_failed_attempt(error: str, now: datetime):
    """The value of ``history`` once the claimed attempt (``attempts``) failed with ``error``: for
    an UPDATE of the run's row, in the statement that records the failure."""
    entry = func.jsonb_build_object("attempt", col(StageRun.attempts), "at", now, "error", error)
    appended = col(StageRun.history).op("||")(func.jsonb_build_array(entry))
    latest: ColumnClause[Any] = literal_column(f"'$[last - {HISTORY_KEPT - 1} to last]'::jsonpath")
    return func.jsonb_path_query_array(appended, latest)
