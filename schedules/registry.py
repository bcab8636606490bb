"""The periodic passes: name, trigger, and the function that enqueues (never does) the work. Each
returns the ids of the stage runs it sent. The scheduler fires them (``schedules.runner``), and an
operator can fire one by hand (`loom passes run`); both record the firing (``schedules.record``)."""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from models import crontab
from models.settings import get_settings
from schedules.compaction import compact_grown
from schedules.contexts import build_missing
from schedules.night_weaving import weave_night
from schedules.reembedding import reembed_outdated
from schedules.retention import plan_partitions
from schedules.screening import rescreen_outdated
from schedules.titling import title_untitled
from workers import outbox


@dataclass(frozen=True)
class Pass:
    name: str
    trigger: BaseTrigger
    run: Callable[[], list[int]]
    # Fired when the scheduler starts too: the first look after an upgrade should not wait an interval.
    at_start: bool = False
    schedule: str = ""  # the trigger as a person writes it: "every 10 s", "0 3 * * * (UTC)"


def passes() -> dict[str, Pass]:
    settings = get_settings()
    intervals = [
        ("sweep", settings.sweep_interval_seconds, lambda: outbox.sweep(settings.sweep_grace_seconds), False),
        (
            "reembed",
            settings.reembed_interval_seconds,
            lambda: reembed_outdated(settings.reembed_batch),
            False,
        ),
        ("titler", settings.conversation_titler_interval_seconds, title_untitled, False),
        ("compaction", settings.compaction_auto_interval_seconds, compact_grown, False),
        # Months ahead made, months past the TTL dropped or trimmed, old months moved to warm.
        ("retention", settings.retention_interval_seconds, plan_partitions, True),
        # After an upgrade that changed the screening rules: the turns judged by older rules.
        ("rescreen", settings.rescreen_interval_seconds, rescreen_outdated, True),
        # After the upgrade that brought turns' contexts: every month's; then the months made since.
        ("contexts", settings.retention_interval_seconds, build_missing, True),
    ]
    scheduled = {
        name: Pass(name, IntervalTrigger(seconds=seconds), run, at_start, every(seconds))
        for name, seconds, run, at_start in intervals
    }
    # The nightly consolidation of LoomSessions, at a time of day rather than an interval.
    night = crontab.trigger(settings.night_weaving_cron)
    scheduled["night_weaving"] = Pass(
        "night_weaving", night, weave_night, schedule=f"{settings.night_weaving_cron} (UTC)"
    )
    return scheduled


def every(seconds: int) -> str:
    """An interval as a person says it: ``every 10 s``, ``every 5 min``, ``every 1 h``."""
    for unit, size in (("h", 3600), ("min", 60)):
        if seconds % size == 0:
            return f"every {seconds // size} {unit}"
    return f"every {seconds} s"


def next_due(trigger: BaseTrigger, last_started: datetime | None, now: datetime) -> datetime | None:
    """When the trigger next falls due: a cron's next time after ``now``; an interval's after the
    last firing (None before one: the scheduler counts it from its own start)."""
    if isinstance(trigger, CronTrigger):
        return trigger.get_next_fire_time(None, now)
    assert isinstance(trigger, IntervalTrigger)
    if last_started is None:
        return None
    return max(last_started + timedelta(seconds=trigger.interval.total_seconds()), now)
