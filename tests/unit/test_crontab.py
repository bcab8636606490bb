"""models.crontab: a crontab's day-of-week field read as crontab reads it (Sunday 0 or 7), not as
APScheduler numbers days (Monday 0)."""

from datetime import UTC, datetime

import pytest

from models import crontab

FRIDAY = datetime(2026, 12, 4, 10, tzinfo=UTC)


@pytest.mark.parametrize(
    ("expression", "next_runs"),
    [
        ("30 2 * * 1-5", ["2026-12-07 02:30"]),  # Monday to Friday: Monday next, not Saturday
        ("0 3 * * 0", ["2026-12-06 03:00"]),  # Sunday
        ("0 3 * * 7", ["2026-12-06 03:00"]),  # Sunday too
        ("0 3 * * 0-2", ["2026-12-06 03:00", "2026-12-07 03:00", "2026-12-08 03:00", "2026-12-13 03:00"]),
        ("0 3 * * */2", ["2026-12-05 03:00", "2026-12-06 03:00", "2026-12-08 03:00"]),  # sat, sun, tue
        ("0 3 * * mon-fri", ["2026-12-07 03:00"]),  # names as both read them
        ("0 3 * * *", ["2026-12-05 03:00", "2026-12-06 03:00"]),
    ],
)
def test_day_numbers_mean_crontabs_days(expression, next_runs):
    trigger, at, runs = crontab.trigger(expression), FRIDAY, []
    for _ in next_runs:
        at = trigger.get_next_fire_time(None, at)
        runs.append(at.strftime("%Y-%m-%d %H:%M"))
        at = at.replace(second=1)
    assert runs == next_runs


@pytest.mark.parametrize(
    ("expression", "says"),
    [("0 3 * *", "5 fields"), ("0 3 * * 8", "out of range"), ("0 3 * * 5-2", "out of range"),
     ("0 3 * * x-1", "weekday name"), ("61 3 * * *", "61")],
)  # fmt: skip
def test_a_crontab_that_is_not_one_is_refused_saying_why(expression, says):
    with pytest.raises(ValueError, match=says):
        crontab.trigger(expression)
