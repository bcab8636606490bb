"""`loom up` restarts what dies (a child process, an embedded server) with backoff: what keeps
failing at once waits longer each time, up to a cap, and what ran a while starts over quickly."""

from services.supervisor import Backoff


def test_a_process_that_keeps_dying_at_once_waits_longer_each_time_up_to_the_cap():
    backoff = Backoff(first=1.0, cap=8.0, stable_after=30.0)
    delays = [backoff.after_exit(ran_for=0.1) for _ in range(6)]
    assert delays == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]


def test_a_process_that_ran_a_while_is_restarted_after_the_first_pause_again():
    backoff = Backoff(first=1.0, cap=8.0, stable_after=30.0)
    for _ in range(4):
        backoff.after_exit(ran_for=0.1)
    assert backoff.after_exit(ran_for=31.0) == 1.0
    assert backoff.after_exit(ran_for=0.1) == 2.0


def test_a_success_resets_the_backoff():
    backoff = Backoff(first=0.5, cap=4.0)
    assert [backoff.after_exit(ran_for=0) for _ in range(3)] == [0.5, 1.0, 2.0]
    backoff.reset()
    assert backoff.after_exit(ran_for=0) == 0.5
