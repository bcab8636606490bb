"""The stages: each a module of this package that declares itself with ``register``. The ledger's
callers (the outbox, the sweep, the worker, ``loom runs``, the status snapshot) find stages here,
so adding a stage is adding its module (and its tests), with no edit elsewhere.

A declaration is plain data: the actor itself is declared on the broker a process sets up
(``workers.broker.setup``), so importing a stage builds nothing and connects to nothing. This
package imports nothing of the ledger or the broker (they import it)."""

import functools
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import ColumnElement, func

from models.stage_run import FAILED, SKIPPED


@dataclass(frozen=True)
class Stage:
    """A stage's declaration. A run works on one subject, ``<subject_kind>:<id>`` (an embedding
    row, a thread), and is unique by its key, ``<name>:<id>:<version>``: the version says what the
    run was asked to do (the text's digest, the window's last turn), so the same request is never
    queued twice and a new one gets a run of its own."""

    name: str  # the ledger's ``stage`` column and the stage's queue, e.g. "embedding"
    # The actor's body: takes the run ids a message carries, claims and works them. Its name is
    # the Dramatiq actor's name (messages in Redis carry it: keep it across releases).
    work: Callable[[list[int]], None]
    subject_kind: str  # what a run's subject is, e.g. "embedding" or "thread"
    # Run ids a message carries: a batching stage takes many (one model call serves them), a stage
    # whose runs each wait on a model takes one, so worker threads wait on several calls at once.
    chunk: int = 64
    # Statuses an operator may send back to pending with `loom runs retry` (succeeded never is).
    retryable: tuple[str, ...] = (FAILED, SKIPPED)

    @property
    def queue(self) -> str:
        return self.name

    @property
    def actor_name(self) -> str:
        return self.work.__name__

    def subject(self, subject_id: int) -> str:
        return f"{self.subject_kind}:{subject_id}"

    def subject_id(self, subject: str) -> int:
        kind, _, number = subject.partition(":")
        if kind != self.subject_kind or not number.isdigit():
            raise ValueError(f"{subject!r} is not a subject of the {self.name} stage")
        return int(number)

    def key(self, subject_id: int, version: str) -> ColumnElement[str]:
        """The run's key, as SQL computes it (``loom_run_key``, the one definition): for the
        statement that writes or looks up the run."""
        return func.loom_run_key(self.name, subject_id, version)


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
