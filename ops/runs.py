"""The stage ledger's ops (``runs.list``, ``runs.get``, ``runs.retry``, ``runs.retry_stage``). A run
as every op that starts one answers it is ``ops.schemas.runs``; waiting for it, ``ops.waiting.started``.

The ledger spans every namespace (a run's subject names none), so the registry serves its ops only
to a token for every namespace (``loom tokens create --all-namespaces``): viewer to read, admin to
act. Their requests name no namespace."""

from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, ConfigDict, Field

from models.stage_run import FAILED, StageRun, Status
from ops.caller import Caller
from ops.errors import invalid, not_found
from ops.schemas import Answer, Moment, OperatorRequest
from ops.schemas.runs import RunAnswer, run_public
from pipelines import ledger_stats
from workers import ledger, outbox, stages

# --- the ledger's ops: served only to a token for every namespace (a run's subject names none) ---

RunId = Annotated[int, Field(ge=1, le=2**63 - 1)]
PAGE_MAX = 500  # the most runs one page of runs.list holds


class RunsRequest(OperatorRequest):
    status: Status | None = Field(
        default=None, description="Only runs in this status (pending, running, succeeded, skipped, failed)."
    )
    stage: str | None = Field(
        default=None, min_length=1, max_length=32, description="Only runs of this stage (1-32 characters)."
    )
    since: AwareDatetime | None = Field(
        default=None, description="Only runs requested at or after this time (ISO 8601 with its UTC offset)."
    )
    before_id: RunId | None = Field(
        default=None,
        description="Paging: only runs older than this run id (the last id of the previous page).",
    )
    limit: int = Field(
        default=50, ge=1, le=PAGE_MAX, description="How many runs a page holds (1-500, default 50)."
    )


class FailedAttempt(Answer):
    attempt: int = Field(description="Which attempt of the run it was, 1 for the first.")
    at: Moment = Field(description="When the attempt failed (ISO 8601 with its UTC offset).")
    error: str = Field(description="The error the attempt ended with (its first 4,000 characters).")


class RunRow(RunAnswer):
    """A run as the ops that start one answer it, and the rest of its record."""

    history: list[FailedAttempt] = Field(
        description=(
            "Each failed attempt, oldest first (the latest 50). A run that succeeded on retry keeps the "
            "errors of the attempts before: `status` says where it stands now."
        )
    )

    subject: str = Field(
        description=(
            "What the run works on (e.g. embedding:<row id>, a thread or a session), unique per stage with "
            "its key."
        )
    )
    params: dict[str, Any] = Field(description="The run's parameters, as its stage reads them.")
    updated_at: Moment = Field(description="When the run's record last changed.")
    started_at: Moment | None = Field(
        description="When a worker last started it; null while it has never run."
    )
    available_at: Moment = Field(
        description="When it may run next (later than now while it backs off between attempts)."
    )


class RunsAnswer(Answer):
    runs: list[RunRow] = Field(description="The ledger's runs, newest first.")
    counts: dict[str, dict[str, int]] = Field(description="For every stage, its runs counted by status.")


def run_row(run: StageRun) -> RunRow:
    """The run as every op shows it (``run_public``), with what the ledger's own views add."""
    return RunRow(
        **dict(run_public(run)),
        history=run.history,
        subject=run.subject,
        params=run.params,
        updated_at=run.updated_at,
        started_at=run.started_at,
        available_at=run.available_at,
    )


def list_runs(caller: Caller, req: RunsRequest) -> RunsAnswer:
    """List the stage-run ledger, newest first, with every stage's counts by status.

    The background work (embedding, ingest, compaction, extraction, erasure...) as runs, filtered by
    status, stage and the time they were requested, and paged by `before_id`. For an operator (a
    token of every namespace)."""
    found = ledger.select_runs(req.status, req.stage, req.since, req.limit, req.before_id)
    return RunsAnswer(runs=[run_row(run) for run in found], counts=ledger_stats.counts())


class RunRequest(OperatorRequest):
    run_id: RunId = Field(description="The run's id in the ledger.")


# Named apart from the run every op answers (``RunAnswer``), under the title it has always had.
class RunGetAnswer(Answer):
    model_config = ConfigDict(title="RunAnswer")

    run: RunRow = Field(description="The run, whole (attempts, error, subject, params, result, times).")


def get_run(caller: Caller, req: RunRequest) -> RunGetAnswer:
    """Read one stage run whole: attempts, error, subject, params, result and times.

    Use it to poll a run an op answered. For an operator (a token of every namespace).

    Errors: 404 when there is no such run."""
    run = ledger.get(req.run_id)
    if run is None:
        raise not_found(f"no stage run {req.run_id}")
    return RunGetAnswer(run=run_row(run))


class RetryAnswer(Answer):
    run: RunRow = Field(description="The run as it now is.")
    requeued: bool = Field(
        description=(
            "Whether it was queued again (false: it was not failed, nor a skipped run its stage retries)."
        )
    )
    message: str = Field(description="What happened, in a sentence (as `loom runs retry` prints it).")


def retry_run(caller: Caller, req: RunRequest) -> RetryAnswer:
    """Queue a failed run again (or a skipped one, where its stage retries those).

    As `loom runs retry`; `requeued` says whether it was, `message` why. For an admin of every
    namespace.

    Errors: 404 when there is no such run."""
    outcome = ledger.retry(req.run_id)
    if outcome is None:
        raise not_found(f"no stage run {req.run_id}")
    message = outcome.message
    if outcome.requeued and not outbox.send(stages.get(outcome.run.stage), [req.run_id]):
        message += " (the broker did not answer: the sweep sends it when it does)"
    return RetryAnswer(run=run_row(outcome.run), requeued=outcome.requeued, message=message)


class RetryStageRequest(OperatorRequest):
    stage: str = Field(
        min_length=1, max_length=32, description="The stage whose runs to queue again (1-32 characters)."
    )
    status: Literal["failed", "skipped"] = Field(
        default=FAILED, description="Which runs: failed (default), or skipped where the stage retries those."
    )


class RetryStageAnswer(Answer):
    stage: str = Field(description="The stage retried.")
    status: str = Field(description="The status of the runs retried.")
    requeued: int = Field(description="How many runs were sent back to pending.")
    message: str = Field(description="What happened, in a sentence.")


def retry_stage(caller: Caller, req: RetryStageRequest) -> RetryStageAnswer:
    """Queue every failed (or skipped) run of a stage again.

    As `loom runs retry --stage`; answers how many were requeued. For an admin of every namespace.

    Errors: 422 for an unknown stage, or a status the stage does not retry."""
    declared = stages.all_stages()
    if req.stage not in declared:
        raise invalid(f"stage must be one of {', '.join(sorted(declared))}", "stage")
    if req.status not in declared[req.stage].retryable:
        raise invalid(f"the {req.stage} stage does not retry {req.status} runs", "status")
    requeued, sent = 0, True
    for ids in ledger.retry_all(req.stage, req.status):
        sent = outbox.send(declared[req.stage], ids) and sent
        requeued += len(ids)
    message = f"{requeued} {req.stage} runs queued again"
    if not sent:
        message += " (the broker did not answer: the sweep sends them when it does)"
    return RetryStageAnswer(stage=req.stage, status=req.status, requeued=requeued, message=message)
