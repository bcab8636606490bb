"""The periodic passes: name, trigger, and the function that enqueues (never does) the work."""

from collections.abc import Callable
from dataclasses import dataclass

from apscheduler.triggers.interval import IntervalTrigger

from models.settings import get_settings
from workers import outbox
from workers.stages.embedding import reembed_outdated


@dataclass(frozen=True)
class Pass:
    name: str
    trigger: IntervalTrigger
    run: Callable[[], object]


def passes() -> list[Pass]:
    settings = get_settings()
    return [
        Pass(
            "sweep",
            IntervalTrigger(seconds=settings.sweep_interval_seconds),
            lambda: outbox.sweep(settings.sweep_grace_seconds),
        ),
        Pass(
            "reembed",
            IntervalTrigger(seconds=settings.reembed_interval_seconds),
            lambda: reembed_outdated(settings.reembed_batch),
        ),
    ]
