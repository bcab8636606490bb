"""The stages: each a module of this package that declares itself with ``register``. The ledger's
callers (the outbox, the sweep, the worker, ``loom runs``, the status snapshot) find stages here,
so adding a stage is adding its module (and its tests), with no edit elsewhere."""

import functools
import importlib
import pkgutil
from dataclasses import dataclass

import dramatiq

from models.stage_run import FAILED, SKIPPED


@dataclass(frozen=True)
class Stage:
    name: str  # the ledger's ``stage`` column, e.g. "embedding"
    actor: dramatiq.Actor  # claims the stage's runs; its queue is the stage's
    # Statuses an operator may send back to pending with `loom runs retry` (succeeded never is).
    retryable: tuple[str, ...] = (FAILED, SKIPPED)

    @property
    def queue(self) -> str:
        return self.actor.queue_name


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
