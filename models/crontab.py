"""A crontab expression ("30 2 * * 1-5") as APScheduler's trigger, read as crontab reads it.

APScheduler's ``CronTrigger.from_crontab`` passes the day-of-week field through with its own
numbering, Monday 0, so crontab's "1-5" (Monday to Friday) would fire Tuesday to Saturday and "*/2"
on other days than crontab's. A field of day numbers is therefore written out as the days it means,
by name (0 and 7 Sunday, as in crontab); names pass through, both read them alike."""

import re

from apscheduler.triggers.cron import CronTrigger

DAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
NUMBERED = re.compile(r"[\d*,/-]+")


def trigger(expression: str) -> CronTrigger:
    """The trigger of a five-field crontab in UTC; a ValueError names what is wrong."""
    fields = expression.split()
    if len(fields) != 5:
        raise ValueError(f"a crontab has 5 fields (minute hour day month day-of-week), not {len(fields)}")
    if fields[4] != "*" and NUMBERED.fullmatch(fields[4]):
        fields[4] = ",".join(DAY_NAMES[day] for day in sorted(_days(fields[4])))
    return CronTrigger.from_crontab(" ".join(fields), timezone="UTC")


def _days(field: str) -> set[int]:
    """The days (Sunday 0) a numeric day-of-week field names: items ``*``, ``a`` or ``a-b``, each
    with an optional ``/step``, comma-separated."""
    days: set[int] = set()
    for item in field.split(","):
        span, _, step = item.partition("/")
        try:
            if span == "*":
                low, high = 0, 6
            elif "-" in span:
                low, high = (int(end) for end in span.split("-", 1))
            else:
                low = int(span)
                high = 6 if step else low  # "a/n": from a on
            every = int(step) if step else 1
        except ValueError:
            raise ValueError(f"day of week {item!r} is not a crontab day (0-7, 0 and 7 Sunday)") from None
        if not 0 <= low <= high <= 7 or every < 1:
            raise ValueError(f"day of week {item!r} is out of range (0-7, 0 and 7 Sunday)")
        days.update(day % 7 for day in range(low, high + 1, every))
    return days
