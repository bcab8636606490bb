"""An idle worker waits for a ring instead of polling Redis, yet a message sent to it runs at once,
and a busy queue is worked off without waiting for the idle fetch (workers.doorbell)."""

import threading
import time

import dramatiq
import pytest

from tests.support.waits import wait_until
from workers.doorbell import IDLE_FETCH_SECONDS

QUEUE = "doorbell_probe"
ran: list[tuple[int, float]] = []  # (number, when)
done = threading.Event()


@pytest.fixture(scope="module")
def probe(broker):
    """An actor on a queue of its own, declared on the tests' broker (a worker started later
    consumes it too, as it would any queue declared)."""

    def run(number: int, seconds: float) -> None:
        time.sleep(seconds)
        ran.append((number, time.monotonic()))

    return dramatiq.actor(run, broker=broker, actor_name="doorbell_probe", queue_name=QUEUE, max_retries=0)


def fetches(broker) -> int:
    """Scripts Redis has run: each consumer's fetch is one."""
    stats = broker.client.info("commandstats")
    return sum(stats.get(name, {}).get("calls", 0) for name in ("cmdstat_evalsha", "cmdstat_eval"))


def test_an_idle_worker_fetches_each_queue_about_once_a_second(probe, worker, broker):
    queues = len(worker.consumers)  # each stage's queue and its delay queue, and the probe's
    time.sleep(2 * IDLE_FETCH_SECONDS)  # every consumer has missed once
    before, began = fetches(broker), time.monotonic()
    time.sleep(3)
    per_second = (fetches(broker) - before) / (time.monotonic() - began)
    # Polling every 100 ms (as before the doorbell) ran about 13 fetches a second per queue.
    assert per_second <= 1.5 * queues / IDLE_FETCH_SECONDS, (per_second, queues)


def test_a_message_sent_to_an_idle_worker_runs_within_a_fraction_of_the_idle_fetch(probe, worker):
    ran.clear()
    waits = []
    for number in range(7):
        time.sleep(1.5 * IDLE_FETCH_SECONDS)  # idle: the probe's consumer last missed a while ago
        sent = time.monotonic()
        probe.send(number, 0)
        wait_until(lambda n=number: any(m == n for m, _ in ran), timeout=10, what=f"message {number}")
        waits.append(next(at for m, at in ran if m == number) - sent)
    # Without a ring each would wait for the next fetch: up to a second, half a second on average,
    # so six of seven under 0.3 s by chance is a 0.4 % event. One may be slow on a loaded machine.
    assert sorted(waits)[-2] < 0.3 * IDLE_FETCH_SECONDS, waits


def test_a_queue_longer_than_the_prefetch_is_worked_off_without_idle_waits(probe, worker):
    ran.clear()
    began = time.monotonic()
    for number in range(24):  # six times the prefetch of a worker of two threads
        probe.send(number, 0.05)
    wait_until(lambda: len(ran) == 24, timeout=30, what="every message to run")
    # Two threads take 0.6 s of sleeping; fetching again only each idle second would take 6 s.
    assert time.monotonic() - began < 3 * IDLE_FETCH_SECONDS, ran
