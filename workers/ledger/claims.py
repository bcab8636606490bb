"""Working a run: claiming, the lease and its heartbeat, finishing, releasing with a backoff.

Claims are ``WITH chosen AS MATERIALIZED (SELECT … FOR UPDATE SKIP LOCKED) UPDATE …``: two
workers never hold the same run. A claimed run carries a short lease that its worker renews while
it works (``leased``), so a run whose worker was killed is claimed again within one lease. A
released run waits out its backoff (``available_at``) before any claim takes it, so an outage does
not burn its attempts. The ledger owns attempts and backoff: Dramatiq retries nothing itself.

A worker told to stop claims nothing more (``stop_claiming``) and, once its grace has passed, hands
back what it still holds (``hand_back``): pending again, the attempt not spent, claimable at once.
"""

import json
import logging
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from sqlalchemy import and_, case, or_, update
from sqlmodel import Session, col, select

from models import db
from models.base import stored, utcnow
from models.queries import stage_runs as queries
from models.settings import get_settings
from models.stage_run import FAILED, PENDING, RUNNING, StageRun, with_failed_attempt
from workers.ledger.chosen import among

log = logging.getLogger(__name__)

# Every claim token this process makes starts with this, so a stopping worker finds the runs it
# still holds without keeping a list of them (a token is the column's 32 characters).
_PROCESS = secrets.token_hex(6)
_stopping = threading.Event()  # set by stop_claiming: claims take nothing from then on
_refused: set[str] = set()  # stages whose claims were refused while stopping: to wake after


def _claimable(now: datetime):
    """Pending past its backoff, or running past its lease with attempts left (a run whose worker
    died holding it on its last attempt is failed by ``fail_abandoned`` instead: a run that kills
    its worker must not be claimed forever)."""
    return or_(
        and_(col(StageRun.status) == PENDING, col(StageRun.available_at) <= now),
        and_(
            col(StageRun.status) == RUNNING,
            col(StageRun.lease_expires_at) < now,
            col(StageRun.attempts) < get_settings().stage_max_attempts,
        ),
    )


def claim(stage: str, run_ids: list[int], fill: int) -> list[StageRun]:
    """Claim the given runs first and, up to ``fill`` in all, other claimable runs of the stage, so
    one model call serves many messages. Returns the claimed runs (attempts already counted), all
    carrying this claim's token: only the holder of a claim may renew, finish or release its runs,
    so a worker that lost its lease (a database outage outlasted it) cannot touch a run another
    worker claimed since. A stopping process claims nothing: the runs wait, pending, for the
    next worker, which ``hand_back`` names the stage for."""
    if _stopping.is_set():
        _refused.add(stage)
        return []
    now = utcnow()
    wanted = col(StageRun.id).in_(run_ids)
    chosen = (
        select(col(StageRun.id))
        .where(col(StageRun.stage) == stage, _claimable(now))
        .order_by(case((wanted, 0), else_=1), col(StageRun.id))
        .limit(fill)
        .with_for_update(skip_locked=True)
    )
    lease = now + timedelta(seconds=get_settings().stage_lease_seconds)
    with db.session() as s:
        claimed = s.exec(
            update(StageRun)
            .where(among(chosen))
            .values(
                status=RUNNING,
                attempts=col(StageRun.attempts) + 1,
                started_at=now,
                updated_at=now,
                lease_expires_at=lease,
                claim=_PROCESS + secrets.token_hex(10),
            )
            .returning(StageRun)
        ).scalars()
        return sorted(claimed, key=lambda run: run.id)


def _held(runs: list[StageRun]):
    """The runs, while still running under the claim they were taken with."""
    by_claim: dict[str | None, list[int]] = {}
    for run in runs:
        by_claim.setdefault(run.claim, []).append(stored(run.id))
    return and_(
        col(StageRun.status) == RUNNING,
        or_(
            *(
                and_(col(StageRun.claim) == token, col(StageRun.id).in_(ids))
                for token, ids in by_claim.items()
            )
        ),
    )


def add_to_result(s: Session, run_id: int, counts: dict[str, int]) -> None:
    """Add ``counts`` to the run's ``result`` in the caller's transaction: a stage that works in
    batches counts each batch with the batch, so a run killed midway and finished by the next
    delivery still reports the whole."""
    if any(counts.values()):
        s.execute(queries.ADD_TO_RESULT, {"counts": json.dumps(counts), "id": run_id})


def show_progress(run: StageRun, result: dict) -> None:
    """The run's result so far, while this claim still holds it: what a wait on a long run shows
    (``commands.progress``) before ``finish`` writes the whole."""
    with db.session() as s:
        s.exec(update(StageRun).where(_held([run])).values(result=result))


def finish(
    s: Session,
    runs: list[StageRun],
    status: str,
    reason: str | None = None,
    result: dict | None = None,
    error: str | None = None,
    keep_result: bool = False,
) -> int:
    """Close claimed runs that are still held: a late duplicate cannot overwrite a newer outcome.
    Returns how many were closed (a stage whose writes must stand or fall with its claim rolls
    back on fewer). ``keep_result``: the result is the counts the run added as it went
    (``add_to_result``)."""
    if not runs:
        return 0
    now = utcnow()
    closed = s.exec(
        update(StageRun)
        .where(_held(runs))
        .values(
            status=status,
            reason=reason,
            **({} if keep_result else {"result": result}),
            finished_at=now,
            updated_at=now,
            lease_expires_at=None,
            **(
                {"last_error": error[:4000], "history": with_failed_attempt(error[:4000], now)}
                if error
                else {}
            ),
        )
    )
    return closed.rowcount


def extend(runs: list[StageRun]) -> None:
    """Renew the lease of runs this claim still holds."""
    now = utcnow()
    with db.session() as s:
        s.exec(
            update(StageRun)
            .where(_held(runs))
            .values(lease_expires_at=now + timedelta(seconds=get_settings().stage_lease_seconds))
        )


# The runs this thread renews the lease of: a block leased inside another (the model's call inside
# a compaction's whole run) adds no second heartbeat, whose exit would wait on the first's renewal.
_renewing = threading.local()


@contextmanager
def leased(runs: list[StageRun]) -> Iterator[None]:
    """Renew the runs' lease every third of it while the block works, however long the model takes;
    a worker killed mid-block stops renewing, and its runs are claimable one lease later. Inside a
    block that already renews them, nothing more."""
    held: set[int] = getattr(_renewing, "ids", set())
    ids = {stored(run.id) for run in runs}
    if ids <= held:
        yield
        return
    _renewing.ids = held | ids
    stop = threading.Event()

    def renew() -> None:
        while not stop.wait(get_settings().stage_lease_seconds / 3):
            try:
                extend(runs)
            except Exception as exc:  # the database may be restarting: the next beat tries again
                log.warning("could not renew the lease of %d runs: %s", len(runs), exc)

    beat = threading.Thread(target=renew, name="lease-heartbeat", daemon=True)
    beat.start()
    try:
        yield
    finally:
        _renewing.ids = held
        stop.set()
        beat.join()


def backoff(attempts: int) -> timedelta:
    """How long a run released after its ``attempts``-th attempt waits: doubling from the minimum."""
    settings = get_settings()
    ms = min(settings.stage_min_backoff_ms * 2 ** max(attempts - 1, 0), settings.stage_max_backoff_ms)
    return timedelta(milliseconds=ms)


def release(
    s: Session, runs: list[StageRun], error: str, reason: str | None = None
) -> dict[timedelta, list[int]]:
    """After a transient failure: runs with attempts left go back to ``pending``, claimable once
    their backoff has passed; the rest are ``failed``, with ``reason`` (what kind of failure)
    when given. Returns the retrying runs' ids by backoff
    (runs of one claim share their attempts, so this is one group as a rule)."""
    limit = get_settings().stage_max_attempts
    now = utcnow()
    retrying: dict[timedelta, list[StageRun]] = {}
    for run in runs:
        if run.attempts < limit:
            retrying.setdefault(backoff(run.attempts), []).append(run)
    failed = [run for run in runs if run.attempts >= limit]
    groups = [(PENDING, now + wait, group) for wait, group in retrying.items()] + [(FAILED, now, failed)]
    for status, available_at, group in groups:
        if group:
            s.exec(
                update(StageRun)
                .where(_held(group))
                .values(
                    status=status,
                    last_error=error[:4000],
                    history=with_failed_attempt(error[:4000], now),
                    reason=reason,
                    updated_at=now,
                    lease_expires_at=None,
                    available_at=available_at,
                )
            )
    return {wait: [stored(run.id) for run in group] for wait, group in retrying.items()}


def stop_claiming() -> None:
    """This process is stopping: every claim from now on takes nothing."""
    _stopping.set()


def start_claiming() -> None:
    """A worker starts in this process: its claims take runs again (after an earlier worker of the
    process stopped, as tests start them)."""
    _refused.clear()
    _stopping.clear()


def hand_back() -> set[str]:
    """Once a stopping worker's grace has passed: the runs this process still holds go back to
    pending as they were before their claim. The attempt is not spent (the run did not fail, its
    worker was told to stop), and the run is claimable at once; a late finish of its old claim
    closes nothing. Returns the stages with runs waiting for a worker: those handed back and those
    whose claims were refused."""
    now = utcnow()
    with db.session() as s:
        handed = s.exec(
            update(StageRun)
            .where(col(StageRun.status) == RUNNING, col(StageRun.claim).startswith(_PROCESS, autoescape=True))
            .values(
                status=PENDING,
                attempts=StageRun.attempts - 1,
                claim=None,
                lease_expires_at=None,
                available_at=now,
                updated_at=now,
            )
            .returning(col(StageRun.id), col(StageRun.stage))
        ).all()
    if handed:
        log.info("handed back %d runs still in flight: %s", len(handed), sorted(i for i, _ in handed))
    return _refused | {stage for _, stage in handed}
