"""The stages: each a module of this package that declares itself with ``register``. The ledger's
callers (the outbox, the sweep, the worker, ``loom runs``, the status snapshot) find stages here,
so adding a stage is adding its module (and its tests), with no edit elsewhere."""

import functools
import importlib
import logging
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass

import dramatiq

from models import db
from models.stage_run import FAILED, SKIPPED, StageRun

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Stage:
    """A stage's declaration. A run works on one subject, ``<subject_kind>:<id>`` (an embedding
    row, a thread), and is unique by its key, ``<name>:<id>:<version>``: the version says what the
    run was asked to do (the text's digest, the window's last turn), so the same request is never
    queued twice and a new one gets a run of its own."""

    name: str  # the ledger's ``stage`` column, e.g. "embedding"
    actor: dramatiq.Actor  # claims the stage's runs; its queue is the stage's
    subject_kind: str  # what a run's subject is, e.g. "embedding" or "thread"
    # Run ids a message carries: a batching stage takes many (one model call serves them), a stage
    # whose runs each wait on a model takes one, so worker threads wait on several calls at once.
    chunk: int = 64
    # Statuses an operator may send back to pending with `loom runs retry` (succeeded never is).
    retryable: tuple[str, ...] = (FAILED, SKIPPED)

    @property
    def queue(self) -> str:
        return self.actor.queue_name

    def subject(self, subject_id: int) -> str:
        return f"{self.subject_kind}:{subject_id}"

    def subject_id(self, subject: str) -> int:
        kind, _, number = subject.partition(":")
        if kind != self.subject_kind or not number.isdigit():
            raise ValueError(f"{subject!r} is not a subject of the {self.name} stage")
        return int(number)

    def key(self, subject_id: int, version: str) -> str:
        return f"{self.name}:{subject_id}:{version}"


def one_at_a_time(stage: Stage, run_ids: list[int], work: Callable[[StageRun], None]) -> None:
    """The body of an actor whose runs each wait on a model: claim the message's runs one at a
    time, then any other claimable run of the stage, until none is left (wake-ups are skipped
    while one waits, so one message may stand for many runs). Each claim wakes one more message,
    so idle worker threads join in and their waits on the model overlap. An unexpected error
    releases the run with its error, to back off and end ``failed`` like any other failure."""
    from workers import broker, ledger  # here: the ledger imports this package, the broker connects

    wanted = list(run_ids)
    while True:
        runs = ledger.claim(stage.name, wanted[:1], fill=1)
        del wanted[:1]
        if not runs:
            if wanted:
                continue
            return
        broker.send(stage.actor, [], unless_waiting=True)
        try:
            work(runs[0])
        except Exception as exc:  # a defect or an outage: never a run left running for good
            if db.unavailable(exc):
                raise  # the lease brings the run back once the database does
            log.exception("%s run %d failed unexpectedly", stage.name, runs[0].id)
            retry_later(stage, runs[0], f"{type(exc).__name__}: {exc}")


def retry_later(stage: Stage, run: StageRun, error: str, reason: str | None = None) -> None:
    """After a transient failure of one run: back to pending with its backoff (``failed`` once out
    of attempts, ``reason`` then saying what kind), and a wake-up for when the backoff has passed."""
    from workers import broker, ledger

    with db.session() as s:
        retrying = ledger.release(s, [run], error, reason=reason)
    for wait, ids in retrying.items():
        broker.send(stage.actor, ids, delay=wait)


def close(run: StageRun, status: str, **outcome) -> None:
    """Close one run in a transaction of its own (``outcome``: reason, result, error)."""
    from workers import ledger

    with db.session() as s:
        ledger.finish(s, [run], status, **outcome)


def actor(queue_name: str) -> Callable[[Callable[[list[int]], None]], dramatiq.Actor]:
    """The decorator of a stage's actor, on its queue. A failed run is released by the ledger,
    which owns attempts and backoff and sends the delayed wake-up itself; Dramatiq's retries only
    cover an unexpected error (the database going away mid-run), and the runs' lease brings
    those back in any case."""
    from models.settings import get_settings
    from workers import broker

    settings = get_settings()
    return dramatiq.actor(
        broker=broker.broker,
        queue_name=queue_name,
        max_retries=settings.stage_max_attempts,
        min_backoff=settings.stage_min_backoff_ms,
        max_backoff=settings.stage_max_backoff_ms,
    )


_registered: dict[str, Stage] = {}


def register(stage: Stage) -> Stage:
    if _registered.setdefault(stage.name, stage) is not stage:
        raise ValueError(f"stage {stage.name!r} is declared twice")
    return stage


@functools.cache
def _load() -> None:
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")


def all_stages() -> dict[str, Stage]:
    """Every stage by name, each module of this package imported (so declared) first."""
    _load()
    return dict(_registered)


def get(name: str) -> Stage:
    """The stage of that name; KeyError for one no module declares."""
    _load()
    return _registered[name]
