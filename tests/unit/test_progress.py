"""How a wait's progress is said: in turns while an ingest says how far it got, in runs otherwise."""

from commands.progress import _measured
from models.stage_run import FAILED, PENDING, RUNNING, SUCCEEDED, StageRun


def ingest(status: str, done: int | None, turns: int = 4_000) -> StageRun:
    result = None if done is None else {"turns": turns, "done": done}
    return StageRun(stage="ingest", subject="ingest:1", status=status, result=result)


def test_a_running_ingest_is_counted_in_turns_with_its_rate():
    done, total, said = _measured([ingest(RUNNING, 1_000)], seconds=10)
    assert (done, total) == (1_000, 4_000)
    assert said == "1,000/4,000 turns done, 100.0/s, ~30 s left"


def test_a_run_that_failed_midway_is_over_and_says_it_failed_not_half_done():
    """Its partial progress outlives the attempt that wrote it: the wait is over all the same."""
    done, total, said = _measured([ingest(FAILED, 1_200), ingest(SUCCEEDED, 4_000)], seconds=40)
    assert (done, total) == (8_000, 8_000)
    assert said == "8,000/8,000 turns done, 1 run failed, 40 s"


def test_a_run_waiting_for_its_next_attempt_keeps_the_turns_it_got_through():
    done, total, said = _measured([ingest(PENDING, 1_200)], seconds=5)
    assert (done, total) == (1_200, 4_000)
    assert "failed" not in said


def test_runs_without_turns_are_counted_in_runs_with_their_failures():
    runs = [ingest(SUCCEEDED, None), ingest(FAILED, None), ingest(RUNNING, None)]
    done, total, said = _measured(runs, seconds=4)
    assert (done, total) == (2, 3)
    assert said == "2/3 runs done, 1 failed, 0.5/s, ~2 s left"
