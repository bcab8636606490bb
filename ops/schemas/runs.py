"""A stage run as every op that starts one answers it (compaction, ingest, extraction, erasure, the
ledger's own ops)."""

from typing import Any, Literal

from pydantic import Field

from models.stage_run import StageRun
from ops.schemas import Answer, Moment


class RunAnswer(Answer):
    id: int = Field(
        description="The run's id in the stage-run ledger (for runs.get, runs.retry and `loom runs show`)."
    )
    stage: str = Field(
        description=(
            "The stage that does the work (embedding, ingest, compaction, extraction, erasure, brief_window, "
            "...)."
        )
    )
    status: Literal["pending", "running", "succeeded", "skipped", "failed"] = Field(
        description=(
            "Where the run is: pending (queued), running, succeeded, skipped (nothing to do, or no provider) "
            "or failed (after its retries)."
        )
    )
    reason: str | None = Field(
        description=(
            "Why a run was skipped or failed, in a word or two (e.g. no-llm-provider, malformed); null while "
            "it runs or when it succeeded."
        )
    )
    last_error: str | None = Field(
        description="The last attempt's error message, when an attempt failed; null otherwise."
    )
    attempts: int = Field(description="How many times a worker has tried the run so far.")
    result: dict[str, Any] | None = Field(
        description=(
            "What the run did, by its stage's own counts (e.g. turns stored, rows erased by table); null "
            "until it finishes."
        )
    )
    created_at: Moment = Field(description="When the run was requested (ISO 8601 with its UTC offset).")
    finished_at: Moment | None = Field(
        description="When the run reached succeeded, skipped or failed; null while it is pending or running."
    )


def run_public(run: StageRun) -> RunAnswer:
    return RunAnswer(
        id=run.id,
        stage=run.stage,
        status=run.status,
        reason=run.reason,
        last_error=run.last_error,
        attempts=run.attempts,
        result=run.result,
        created_at=run.created_at,
        finished_at=run.finished_at,
    )
