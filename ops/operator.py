"""The operator ops: namespaces with their Record switch, the stage ledger, the periodic passes,
the night weavings and the key paging cursors are signed with, over HTTP (and so the dashboard) as
the CLI has them.

The ledger, the passes, the nights and the cursor keys span every namespace (a run's subject names
no namespace), so the registry serves their ops only to a token for every namespace (``loom tokens
create --all-namespaces``): viewer to read, admin to act. Their requests name no namespace.
``namespaces.list`` answers any token, with the namespaces it covers.
"""

import functools
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import func
from sqlmodel import col, select

from models import db
from models.conversation import Thread
from models.memory import NightWeaving
from models.namespace import Namespace
from models.pass_run import PassRun
from models.stage_run import FAILED, SKIPPED, STATUSES, StageRun
from ops import activity, cursors, runs, status
from ops.caller import Caller
from ops.errors import OpError, invalid, not_found
from ops.schemas import Answer, Moment
from schedules.record import PassBusy, fire
from schedules.registry import passes
from services import Endpoints
from workers import ledger, outbox, stages


class OperatorRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")


RunStatus = Literal[STATUSES]  # type: ignore[valid-type]
RunId = Annotated[int, Field(ge=1, le=2**63 - 1)]


# --- namespaces ----------------------------------------------------------------------------------


class NamespacesRequest(OperatorRequest):
    pass


class NamespaceRow(Answer):
    name: str = Field(description="The namespace's name.")
    conversation_logging_enabled: bool = Field(
        description="Its Record switch: whether it keeps conversations (a namespace with no row does not)."
    )
    threads: int = Field(description="How many live conversation threads it holds.")
    last_turn_at: Moment | None = Field(description="When its newest turn was said; null when it has none.")


class NamespacesAnswer(Answer):
    namespaces: list[NamespaceRow] = Field(
        description="The token's namespaces (every one known, for a token of all namespaces)."
    )


def list_namespaces(caller: Caller, req: NamespacesRequest) -> NamespacesAnswer:
    """List the token's namespaces with their Record switch, thread count and last turn.

    Every namespace known, for a token of all namespaces. Takes no `namespace`."""
    with db.session() as s:
        recording = select(col(Namespace.name), col(Namespace.conversation_logging_enabled))
        threads = (
            select(col(Thread.namespace), func.count(), func.max(col(Thread.last_turn_at)))
            .where(col(Thread.deleted_at).is_(None))
            .group_by(col(Thread.namespace))
        )
        if caller.namespaces is not None:
            recording = recording.where(col(Namespace.name).in_(caller.namespaces))
            threads = threads.where(col(Thread.namespace).in_(caller.namespaces))
        switches = dict(s.exec(recording).all())
        counts = {name: (n, last) for name, n, last in s.exec(threads).all()}
    names = set(caller.namespaces) if caller.namespaces is not None else set(switches) | set(counts)
    return NamespacesAnswer(
        namespaces=[
            NamespaceRow(
                name=name,
                conversation_logging_enabled=switches.get(name, False),
                threads=counts.get(name, (0, None))[0],
                last_turn_at=counts.get(name, (0, None))[1],
            )
            for name in sorted(names)
        ]
    )


# --- the stage ledger ----------------------------------------------------------------------------


class RunsRequest(OperatorRequest):
    status: RunStatus | None = Field(
        default=None, description="Only runs in this status (pending, running, succeeded, skipped, failed)."
    )
    stage: str | None = Field(
        default=None, min_length=1, max_length=32, description="Only runs of this stage (1-32 characters)."
    )
    before_id: RunId | None = Field(
        default=None,
        description="Paging: only runs older than this run id (the last id of the previous page).",
    )
    limit: int = Field(
        default=50, ge=1, le=500, description="How many runs a page holds (1-500, default 50)."
    )


class FailedAttempt(Answer):
    attempt: int = Field(description="Which attempt of the run it was, 1 for the first.")
    at: Moment = Field(description="When the attempt failed (ISO 8601 with its UTC offset).")
    error: str = Field(description="The error the attempt ended with (its first 4,000 characters).")


class RunRow(runs.RunAnswer):
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
    """The run as every op shows it (``runs.run_public``), with what the ledger's own views add."""
    return RunRow(
        **dict(runs.run_public(run)),
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
    status and stage and paged by `before_id`. For an operator (a token of every namespace)."""
    found = ledger.select_runs(req.status, req.stage, limit=req.limit, before_id=req.before_id)
    with db.session() as s:
        counted = s.exec(
            select(col(StageRun.stage), col(StageRun.status), func.count()).group_by(
                col(StageRun.stage), col(StageRun.status)
            )
        ).all()
    counts: dict[str, dict[str, int]] = {}
    for stage, state, n in counted:
        counts.setdefault(stage, dict.fromkeys(STATUSES, 0))[state] = n
    return RunsAnswer(runs=[run_row(run) for run in found], counts=counts)


class RunRequest(OperatorRequest):
    run_id: RunId = Field(description="The run's id in the ledger.")


class RunAnswer(Answer):
    run: RunRow = Field(description="The run, whole (attempts, error, subject, params, result, times).")


def get_run(caller: Caller, req: RunRequest) -> RunAnswer:
    """Read one stage run whole: attempts, error, subject, params, result and times.

    Use it to poll a run an op answered. For an operator (a token of every namespace).

    Errors: 404 when there is no such run."""
    run = ledger.get(req.run_id)
    if run is None:
        raise not_found(f"no stage run {req.run_id}")
    return RunAnswer(run=run_row(run))


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
    status: Literal[FAILED, SKIPPED] = Field(
        default=FAILED, description="Which runs: failed (default), or skipped where the stage retries those."
    )  # type: ignore[valid-type]


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


# --- the periodic passes -------------------------------------------------------------------------


class PassesRequest(OperatorRequest):
    pass


class PassRow(Answer):
    name: str = Field(description="The pass's name (what passes.run takes).")
    trigger: str = Field(description="When the scheduler fires it (its cron or interval).")
    started_at: Moment | None = Field(description="When its last firing started; null if it never fired.")
    finished_at: Moment | None = Field(
        description="When its last firing finished; null while it runs or if it never fired."
    )
    sent: int | None = Field(description="How many runs its last firing requested.")
    by: str | None = Field(description="Who fired it last: scheduler or operator.")
    error: str | None = Field(description="The last firing's error, if it failed.")


class PassesAnswer(Answer):
    passes: list[PassRow] = Field(description="Each periodic pass with its trigger and its last firing.")


def list_passes(caller: Caller, req: PassesRequest) -> PassesAnswer:
    """List the periodic passes, each with its trigger and its last firing.

    For an operator (a token of every namespace)."""
    with db.session() as s:
        last = {row.name: row for row in s.exec(select(PassRun))}
    rows = []
    for name, p in passes().items():
        row = last.get(name)
        rows.append(
            PassRow(
                name=name,
                trigger=str(p.trigger),
                started_at=row.started_at if row else None,
                finished_at=row.finished_at if row else None,
                sent=row.sent if row else None,
                by=row.by if row else None,
                error=row.error if row else None,
            )
        )
    return PassesAnswer(passes=rows)


class PassRunRequest(OperatorRequest):
    name: str = Field(
        min_length=1, max_length=64, description="The pass to fire now (one of passes.list's names)."
    )


class PassRunAnswer(Answer):
    name: str = Field(description="The pass fired.")
    sent: int = Field(description="How many runs it requested.")


def run_pass(caller: Caller, req: PassRunRequest) -> PassRunAnswer:
    """Fire one periodic pass now, as `loom passes run`.

    It enqueues what it would on its schedule, recorded as the operator's. For an admin of every
    namespace.

    Errors: 422 for an unknown pass; 409 while another firing of it runs; 503 when the pass failed."""
    known = passes()
    if req.name not in known:
        raise invalid(f"name must be one of {', '.join(known)}", "name")
    try:
        sent = fire(known[req.name], by="operator")
    except PassBusy:
        raise OpError(409, f"the {req.name} pass is running now; try again when it has finished") from None
    except Exception as exc:  # noqa: BLE001 - recorded on the pass by fire; the caller gets why
        raise OpError(503, f"the {req.name} pass failed: {type(exc).__name__}: {exc}"[:500]) from exc
    return PassRunAnswer(name=req.name, sent=len(sent))


# --- night weaving -------------------------------------------------------------------------------


class NightsRequest(OperatorRequest):
    limit: int = Field(
        default=20,
        ge=1,
        le=100_000,
        description="How many night weavings to answer, newest first (1-100,000, default 20).",
    )


class NightRow(Answer):
    id: str = Field(description="The night weaving's id (a uuid).")
    loom_id: str | None = Field(description="The loom it wove, or null for every loom.")
    started_at: Moment = Field(description="When it started.")
    finished_at: Moment | None = Field(description="When its last run finished; null while runs are left.")
    sessions: int = Field(description="How many sessions it sent to be consolidated.")
    consolidated: int = Field(description="How many of them are consolidated so far.")
    episodes: int = Field(description="How many Episodic memory threads it wove.")
    judged: int = Field(description="How many suggested threads it judged used or unused.")
    used: int = Field(description="Of those judged, how many were used (the rest were unused).")
    by: str = Field(description="Who fired it: scheduler or operator.")


class NightsAnswer(Answer):
    nights: list[NightRow] = Field(description="The night weavings, newest first.")


def list_nights(caller: Caller, req: NightsRequest) -> NightsAnswer:
    """List the night weavings, newest first.

    Each with the sessions it sent and consolidated, the episodes it wove and the memory threads it
    judged. For an operator (a token of every namespace)."""
    with db.session() as s:
        weavings = s.exec(
            select(NightWeaving).order_by(col(NightWeaving.started_at).desc()).limit(req.limit)
        ).all()
    return NightsAnswer(
        nights=[
            NightRow(
                id=str(w.id),
                loom_id=str(w.loom_id) if w.loom_id else None,
                started_at=w.started_at,
                finished_at=w.finished_at,
                sessions=w.sessions,
                consolidated=w.consolidated,
                episodes=w.episodes,
                judged=w.judged,
                used=w.used,
                by=w.by,
            )
            for w in weavings
        ]
    )


# --- cursor keys ---------------------------------------------------------------------------------


class RotateKeyRequest(OperatorRequest):
    pass


class RotateKeyAnswer(Answer):
    key_id: int = Field(description="The new key's id: it signs every paging cursor from now on.")
    accepted_key_ids: list[int] = Field(
        description="The keys whose cursors are accepted: the new one and the one that signed until now."
    )
    retired: int = Field(description="How many keys were dropped: cursors they signed are refused.")


def rotate_cursor_key(caller: Caller, req: RotateKeyRequest) -> RotateKeyAnswer:
    """Sign paging cursors with a new key.

    Cursors issued until now keep paging until the next rotation; those signed before the previous
    one are refused from now on. For an admin of every namespace."""
    rotated = cursors.rotate_key()
    return RotateKeyAnswer(
        key_id=rotated.key_id, accepted_key_ids=rotated.accepted_key_ids, retired=rotated.retired
    )


# --- health --------------------------------------------------------------------------------------


class HealthRequest(OperatorRequest):
    pass


class StageHealth(Answer):
    runs: dict[str, int] | None = Field(
        description="The stage's runs counted by status; null while the database is down."
    )
    oldest_pending_seconds: float | None = Field(
        description="How long the oldest pending run has waited, in seconds; null when none waits."
    )
    queue: str = Field(description="The broker queue the stage's runs are sent on.")
    queued: dict[str, int] | None = Field(
        description="The queue's messages: ready, delayed and dead; null while the broker is down."
    )


class HealthAnswer(Answer):
    database: str = Field(
        description='ok, or (to an admin) the error, which names hosts and ports; "down" to others.'
    )
    broker: str = Field(description='ok, or (to an admin) the broker\'s error; "down" to others.')
    stages: dict[str, StageHealth] = Field(
        description="Each stage's runs, queue and oldest pending run, by stage name."
    )
    embedded_per_second: dict[str, float] | None = Field(
        description="Embeddings written per second over the last 1m and 5m; null when unknown."
    )
    errors: list[str] = Field(
        description="Reads that failed while their server was up (to an admin only; empty to others)."
    )
    # This API process's last hour, a minute a value, the current minute last (``ops.activity``).
    appended_per_minute: list[int] = Field(
        description="This API process's appends in each minute of the last hour, the current minute last."
    )
    searched_per_minute: list[int] = Field(
        description="This API process's searches in each minute of the last hour, the current minute last."
    )


@functools.lru_cache(maxsize=4)
def _probe(at: Endpoints) -> status.Probe:
    """One probe (its own small pool) per database and broker this process reads."""
    return status.Probe(at)


def health(caller: Caller, req: HealthRequest) -> HealthAnswer:
    """Read the server's health: database, broker, each stage's runs and queue.

    `loom status` over HTTP: the servers' checks, each stage's runs by status, queue and oldest pending
    run, the embedding throughput, and this API process's appends and searches per minute over the
    last hour. For an operator (a token of every namespace); error details go to admins only."""
    snap = _probe(status.endpoints()).recent_snapshot()

    def shown(check: status.Check) -> str:  # as /healthz tells them: the detail to an admin only
        return check.label if caller.role == "admin" or check.ok else "down"

    return HealthAnswer(
        database=shown(snap.database),
        broker=shown(snap.broker),
        stages={
            name: StageHealth(
                runs=stage.runs,
                oldest_pending_seconds=stage.oldest_pending_seconds,
                queue=stage.queue,
                queued=stage.queued,
            )
            for name, stage in snap.stages.items()
        },
        embedded_per_second=snap.embedded_per_second,
        errors=snap.errors if caller.role == "admin" else [],
        appended_per_minute=activity.APPENDED.series(),
        searched_per_minute=activity.SEARCHED.series(),
    )
