"""Counts and times conversation.append where it runs (this process), for ``GET /metrics``.

The metrics belong to no prometheus_client registry here: each app registers them in its own
(``api.observability``), so several apps in one process (the tests) do not collide.
"""

import functools
import time
from collections.abc import Callable
from typing import Protocol, TypeVar

from prometheus_client import Counter, Histogram

from ops import activity
from ops.errors import OpError

OUTCOMES = ("stored", "duplicate", "logging_disabled", "deleted", "expired", "rejected", "error")
APPENDS = Counter(
    "loom_appends",
    "conversation.append calls by outcome (rejected: refused by the op, e.g. a namespace the token "
    "does not cover; error: failed)",
    ["outcome"],
    registry=None,
)
APPEND_SECONDS = Histogram(
    "loom_append_duration_seconds",
    "Time conversation.append takes in the op (validation done), whatever its outcome",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
    registry=None,
)
for _outcome in OUTCOMES:
    APPENDS.labels(_outcome)


class Appended(Protocol):
    """What append answers (``AppendAnswer``: its module imports this one) as counted here."""

    @property
    def stored(self) -> bool: ...
    @property
    def reason(self) -> str | None: ...


A = TypeVar("A", bound=Appended)


def observed(append: Callable[..., A]) -> Callable[..., A]:
    """Count each call of ``append`` by its outcome and time it."""

    @functools.wraps(append)
    def wrapper(*args, **kwargs) -> A:
        started = time.perf_counter()
        outcome: str | None = "error"  # an answer not stored gives its reason
        try:
            answer = append(*args, **kwargs)
            outcome = "stored" if answer.stored else answer.reason
            if answer.stored:
                activity.APPENDED.add()
            return answer
        except OpError:
            outcome = "rejected"
            raise
        finally:
            APPENDS.labels(outcome).inc()
            APPEND_SECONDS.observe(time.perf_counter() - started)

    return wrapper
