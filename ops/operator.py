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
    name: str
    conversation_logging_enabled: bool
    threads: int
    last_turn_at: Moment | None


class NamespacesAnswer(Answer):
    namespaces: list[NamespaceRow]


def list_namespaces(caller: Caller, req: NamespacesRequest) -> NamespacesAnswer:
    """The caller's namespaces (every one known, for a token of all), each with its Record switch,
    its thread count and its last turn; a namespace with no row does not record."""
    with db.session() as s:
        recording = select(Namespace.name, Namespace.conversation_logging_enabled)
        threads = (
            select(Thread.namespace, func.count(), func.max(Thread.last_turn_at))
            .where(col(Thread.deleted_at).is_(None))
            .group_by(Thread.namespace)
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
    status: RunStatus | None = None
    stage: str | None = Field(default=None, min_length=1, max_length=32)
    before_id: RunId | None = None  # paging: runs older than this one
    limit: int = Field(default=50, ge=1, le=500)


class RunRow(runs.RunAnswer):
    """A run as the ops that start one answer it, and the rest of its record."""

    subject: str
    params: dict[str, Any]
    updated_at: Moment
    started_at: Moment | None
    available_at: Moment


class RunsAnswer(Answer):
    runs: list[RunRow]
    counts: dict[str, dict[str, int]]  # stage -> status -> runs, over the whole ledger


def run_row(run: StageRun) -> RunRow:
    """The run as every op shows it (``runs.run_public``), with what the ledger's own views add."""
    return RunRow(
        **dict(runs.run_public(run)),
        subject=run.subject,
        params=run.params,
        updated_at=run.updated_at,
        started_at=run.started_at,
        available_at=run.available_at,
    )


def list_runs(caller: Caller, req: RunsRequest) -> RunsAnswer:
    """The ledger, newest first, by stage and status; with every stage's counts by status."""
    found = ledger.select_runs(req.status, req.stage, limit=req.limit, before_id=req.before_id)
    with db.session() as s:
        counted = s.exec(
            select(StageRun.stage, StageRun.status, func.count()).group_by(StageRun.stage, StageRun.status)
        ).all()
    counts: dict[str, dict[str, int]] = {}
    for stage, state, n in counted:
        counts.setdefault(stage, dict.fromkeys(STATUSES, 0))[state] = n
    return RunsAnswer(runs=[run_row(run) for run in found], counts=counts)


class RunRequest(OperatorRequest):
    run_id: RunId


class RunAnswer(Answer):
    run: RunRow


def get_run(caller: Caller, req: RunRequest) -> RunAnswer:
    run = ledger.get(req.run_id)
    if run is None:
        raise not_found(f"no stage run {req.run_id}")
    return RunAnswer(run=run_row(run))


class RetryAnswer(Answer):
    run: RunRow
    requeued: bool
    message: str


def retry_run(caller: Caller, req: RunRequest) -> RetryAnswer:
    """Queue a failed (or skipped, where its stage retries those) run again; `loom runs retry`."""
    outcome = ledger.retry(req.run_id)
    if outcome is None:
        raise not_found(f"no stage run {req.run_id}")
    message = outcome.message
    if outcome.requeued and not outbox.send(outcome.run.stage, [req.run_id]):
        message += " (the broker did not answer: the sweep sends it when it does)"
    return RetryAnswer(run=run_row(outcome.run), requeued=outcome.requeued, message=message)


class RetryStageRequest(OperatorRequest):
    stage: str = Field(min_length=1, max_length=32)
    status: Literal[FAILED, SKIPPED] = FAILED  # type: ignore[valid-type]


class RetryStageAnswer(Answer):
    stage: str
    status: str
    requeued: int  # runs sent back to pending
    message: str


def retry_stage(caller: Caller, req: RetryStageRequest) -> RetryStageAnswer:
    """Queue every failed (or skipped, where the stage retries those) run of a stage again, a
    batch a statement; `loom runs retry --stage S --status S`."""
    declared = stages.all_stages()
    if req.stage not in declared:
        raise invalid(f"stage must be one of {', '.join(sorted(declared))}", "stage")
    if req.status not in declared[req.stage].retryable:
        raise invalid(f"the {req.stage} stage does not retry {req.status} runs", "status")
    requeued, sent = 0, True
    for ids in ledger.retry_all(req.stage, req.status):
        sent = outbox.send(req.stage, ids) and sent
        requeued += len(ids)
    message = f"{requeued} {req.stage} runs queued again"
    if not sent:
        message += " (the broker did not answer: the sweep sends them when it does)"
    return RetryStageAnswer(stage=req.stage, status=req.status, requeued=requeued, message=message)


# --- the periodic passes -------------------------------------------------------------------------


class PassesRequest(OperatorRequest):
    pass


class PassRow(Answer):
    name: str
    trigger: str
    started_at: Moment | None
    finished_at: Moment | None
    sent: int | None
    by: str | None
    error: str | None


class PassesAnswer(Answer):
    passes: list[PassRow]


def list_passes(caller: Caller, req: PassesRequest) -> PassesAnswer:
    """Each pass: its trigger and its last firing (by the scheduler or by hand)."""
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
    name: str = Field(min_length=1, max_length=64)


class PassRunAnswer(Answer):
    name: str
    sent: int


def run_pass(caller: Caller, req: PassRunRequest) -> PassRunAnswer:
    """Fire one pass now, recorded as the operator's: it enqueues what it would on its schedule."""
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
    limit: int = Field(default=20, ge=1, le=100_000)


class NightRow(Answer):
    id: str
    loom_id: str | None
    started_at: Moment
    finished_at: Moment | None
    sessions: int
    consolidated: int
    episodes: int
    judged: int
    used: int  # of those judged; the rest were unused
    by: str


class NightsAnswer(Answer):
    nights: list[NightRow]


def list_nights(caller: Caller, req: NightsRequest) -> NightsAnswer:
    """The night weavings, newest first: the sessions sent and consolidated, the episodes woven
    and the memory threads judged."""
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
    key_id: int  # signs every cursor from now on
    accepted_key_ids: list[int]  # it and the key that signed until now
    retired: int  # keys dropped: the cursors they signed are refused


def rotate_cursor_key(caller: Caller, req: RotateKeyRequest) -> RotateKeyAnswer:
    """Sign paging cursors with a new key (``ops.cursors.rotate_key``): cursors issued until now
    keep paging until the next rotation; those signed before the previous one are refused."""
    rotated = cursors.rotate_key()
    return RotateKeyAnswer(
        key_id=rotated.key_id, accepted_key_ids=rotated.accepted_key_ids, retired=rotated.retired
    )


# --- health --------------------------------------------------------------------------------------


class HealthRequest(OperatorRequest):
    pass


class StageHealth(Answer):
    runs: dict[str, int] | None  # by status; null while the database is down
    oldest_pending_seconds: float | None
    queue: str
    queued: dict[str, int] | None  # ready, delayed, dead; null while the broker is down


class HealthAnswer(Answer):
    database: str  # ok, or (to an admin) the error, which names hosts and ports; else "down"
    broker: str
    stages: dict[str, StageHealth]
    embedded_per_second: dict[str, float] | None
    errors: list[str]
    # This API process's last hour, a minute a value, the current minute last (``ops.activity``).
    appended_per_minute: list[int]
    searched_per_minute: list[int]


@functools.lru_cache(maxsize=4)
def _probe(at: Endpoints) -> status.Probe:
    """One probe (its own small pool) per database and broker this process reads."""
    return status.Probe(at)


def health(caller: Caller, req: HealthRequest) -> HealthAnswer:
    """``loom status`` over HTTP: the servers, each stage's runs, queue and oldest pending run, and
    the last hour's appends and searches."""
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
