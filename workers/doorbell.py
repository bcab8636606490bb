"""Dramatiq's Redis broker with a doorbell: an idle consumer waits for a ring instead of polling.

Dramatiq's Redis consumers poll: one with nothing to do sleeps up to the worker's timeout and runs
its fetch script again. A worker consumes 26 queues (each stage's and its delay queue), so a poll
every 100 ms kept an idle worker at a quarter of a core and its Redis busy, and a poll every second
would make a turn appended to an idle Loom wait up to a second. Here every enqueue also publishes
its queue's name; one listener thread per worker process wakes that queue's consumers at once.
A consumer still fetches every ``IDLE_FETCH_SECONDS`` without a ring, so a ring lost (Redis
restarted, the listener reconnecting) costs at most that."""

import logging
import threading
import time

import redis
from dramatiq import Consumer, Message
from dramatiq.brokers.redis import RedisBroker

log = logging.getLogger(__name__)

IDLE_FETCH_SECONDS = 1.0  # the longest a queue goes unfetched without a ring (Dramatiq's own poll)


class DoorbellBroker(RedisBroker):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.channel = f"{self.namespace}:doorbell"
        self._bells: dict[str, set[threading.Event]] = {}
        self._bells_lock = threading.Lock()
        self._listener: threading.Thread | None = None

    def enqueue(self, message: Message, *, delay: int | None = None) -> Message:
        enqueued = super().enqueue(message, delay=delay)  # on the delay queue when delayed
        try:
            self.client.publish(self.channel, enqueued.queue_name)
        except redis.RedisError as exc:  # stored all the same: the consumer's own fetch finds it
            log.debug("no ring for %s: %s", enqueued.queue_name, exc)
        return enqueued

    def consume(self, queue_name: str, prefetch: int = 1, timeout: int = 5000) -> Consumer:
        """A consumer that fetches without sleeping (``timeout=0``) and waits for its bell
        between fetches, in steps of ``timeout`` (the worker's) so a stopping worker is heard."""
        bell = threading.Event()
        with self._bells_lock:
            self._bells.setdefault(queue_name, set()).add(bell)
            if self._listener is None:
                self._listener = threading.Thread(target=self._listen, name="doorbell", daemon=True)
                self._listener.start()
        return _RungConsumer(self, super().consume(queue_name, prefetch, timeout=0), bell, timeout / 1000)

    def remove_bell(self, queue_name: str, bell: threading.Event) -> None:
        with self._bells_lock:
            self._bells.get(queue_name, set()).discard(bell)

    def _ring(self, queue_name: str | None) -> None:
        """Wake the consumers of ``queue_name``, or every consumer (None)."""
        with self._bells_lock:
            bells = [b for q, bs in self._bells.items() if queue_name in (None, q) for b in bs]
        for bell in bells:
            bell.set()

    def _listening(self) -> bool:
        """Whether a consumer is left to wake; the listener ends (under the lock ``consume``
        starts one under) once none is."""
        with self._bells_lock:
            if any(self._bells.values()):
                return True
            self._listener = None
            return False

    def _listen(self) -> None:
        """Rings from every process that enqueues, for as long as this process consumes."""
        while True:
            try:
                with self.client.pubsub(ignore_subscribe_messages=True) as pubsub:
                    pubsub.subscribe(self.channel)
                    self._ring(None)  # anything enqueued while not listening
                    while self._listening():
                        ring = pubsub.get_message(timeout=IDLE_FETCH_SECONDS)
                        if ring is not None:
                            self._ring(ring["data"].decode())
                    return
            except redis.RedisError as exc:
                log.debug("doorbell not heard (%s): consumers fetch every %ss", exc, IDLE_FETCH_SECONDS)
                if not self._listening():
                    return
                time.sleep(IDLE_FETCH_SECONDS)


class _RungConsumer(Consumer):
    """Dramatiq's Redis consumer, fetching again at once while it finds messages; after a miss,
    once rung or once ``IDLE_FETCH_SECONDS`` have passed."""

    def __init__(self, broker: DoorbellBroker, fetching: Consumer, bell: threading.Event, step: float):
        self.broker, self.fetching, self.bell, self.step = broker, fetching, bell, step
        # the Redis consumer's queue; dramatiq's Consumer base class does not declare the attribute
        self.queue_name = fetching.queue_name  # type: ignore[attr-defined]
        self.missed_at = float("-inf")

    def __next__(self):
        if not self.bell.is_set() and time.monotonic() - self.missed_at < IDLE_FETCH_SECONDS:
            self.bell.wait(self.step)
            return None  # the worker checks whether it is stopping, then asks again
        self.bell.clear()  # before the fetch: a ring for anything it misses stays set
        message = next(self.fetching)
        self.missed_at = time.monotonic() if message is None else float("-inf")
        return message

    # A message settled frees a place in the prefetch: fetch again (a miss may have been a full one).
    def ack(self, message) -> None:
        self.fetching.ack(message)
        self.bell.set()

    def nack(self, message) -> None:
        self.fetching.nack(message)
        self.bell.set()

    def requeue(self, messages) -> None:
        self.fetching.requeue(messages)

    def close(self) -> None:
        self.broker.remove_bell(self.queue_name, self.bell)
        self.fetching.close()
