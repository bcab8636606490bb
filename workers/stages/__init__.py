"""The stages' actor bodies: each a module of this package that gives its stage's declaration
(``models.stages``) the body that works its runs, with ``register``. The ledger's callers (the
outbox, the sweep, the worker, ``loom runs``, the status snapshot) find the stages this process
runs here, so adding a stage is adding its declaration and its module (and its tests), with no
edit elsewhere.

Registering is plain data: the actor itself is declared on the broker a process sets up
(``workers.broker.setup``), so importing a stage builds nothing and connects to nothing. This
package imports nothing of the ledger or the broker (they import it)."""

import functools
import importlib
import pkgutil
from collections.abc import Callable

from models.stages import Stage

# The actor's body: takes the run ids a message carries, claims and works them.
Body = Callable[[list[int]], None]

_registered: dict[str, tuple[Stage, Body]] = {}


def register(stage: Stage, body: Body) -> Stage:
    held, held_body = _registered.setdefault(stage.name, (stage, body))
    if held is not stage or held_body is not body:
        raise ValueError(f"stage {stage.name!r} is declared twice")
    return stage


@functools.cache
def _load() -> None:
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")


def all_stages() -> dict[str, Stage]:
    """Every stage by name, each module of this package imported (so registered) first."""
    _load()
    return {name: stage for name, (stage, _) in _registered.items()}


def get(name: str) -> Stage:
    """The stage of that name; KeyError for one no module registers."""
    _load()
    return _registered[name][0]


def body(stage: Stage) -> Body:
    """What the stage's actor runs."""
    _load()
    return _registered[stage.name][1]
