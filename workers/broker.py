"""The Dramatiq broker: Redis, shared by every worker host. Built on import, before any actor is
declared, so every actor binds to it (import ``workers.broker`` first, as ``workers/__init__`` does)."""

import logging
import threading
import time
from datetime import timedelta

import dramatiq
import redis
from dramatiq.brokers.redis import RedisBroker

from models.settings import get_settings

log = logging.getLogger(__name__)


def _build() -> RedisBroker:
    url = get_settings().redis_url
    if not url:
        raise RuntimeError("LOOM_REDIS_URL is not set and no embedded Redis was started")
    # redis-py connects lazily: building the broker needs no live server, so writes still
    # commit while Redis is down (the sweep re-sends their runs later). The client is built here
    # because RedisBroker(url=...) drops any timeout given beside the url: connecting to an
    # unreachable Redis gives up after 2 s, a call to one that stopped answering after 5 s.
    client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=5)
    broker = RedisBroker(client=client)
    dramatiq.set_broker(broker)
    return broker


broker = _build()


def workers_seen(within_ms: int = 2_000) -> int:
    """Worker processes that fetched from Redis within the last ``within_ms`` (Dramatiq's consumers
    stamp a heartbeat on every fetch, and an idle one fetches every 100 ms). 0 also when Redis
    does not answer."""
    heartbeats = f"{broker.namespace}:__heartbeats__"
    try:
        return broker.client.zcount(heartbeats, int(time.time() * 1000) - within_ms, "+inf")
    except redis.RedisError:
        return 0


class _Outage:
    """Logs a broker outage once when it starts and once when it ends, not once per message, and
    spares the write path a broker that just failed: for ``QUIET_SECONDS`` after a failure, wake-ups
    give up at once (their runs wait for the sweep) instead of each append waiting out the socket
    timeout of a Redis that accepts connections but does not answer. Explicit sends (an operator's
    retry, the sweep, a delayed retry) always try."""

    QUIET_SECONDS = 1.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._down = False
        self._failed_at = -float("inf")

    def failed(self, actor: str, exc: Exception) -> None:
        with self._lock:
            first, self._down, self._failed_at = not self._down, True, time.monotonic()
        if first:
            log.warning("broker unavailable, runs wait for the sweep until it answers: %s (%s)", exc, actor)

    def quiet(self) -> bool:
        return time.monotonic() - self._failed_at < self.QUIET_SECONDS

    def succeeded(self) -> None:
        if self._down:
            with self._lock:
                back, self._down, self._failed_at = self._down, False, -float("inf")
            if back:
                log.warning("broker answers again")


outage = _Outage()


def send(actor: dramatiq.Actor, *args, unless_waiting: bool = False, delay: timedelta | None = None) -> bool:
    """Enqueue one message for ``actor`` (after ``delay``, if given); False when Redis cannot take
    it (the runs stay ``pending`` in the ledger and the sweep sends them again).

    ``unless_waiting`` skips the message when one of the actor's queue is still waiting to be
    fetched: that one is fetched, and claims its runs, after this call, so it sees everything the
    caller committed before it. Under load that makes one message per batch, not one per run."""
    if unless_waiting and outage.quiet():
        return False  # a wake-up, during an outage: the sweep sends the runs once Redis answers
    try:
        # The list Dramatiq's Redis broker pushes message ids onto and consumers pop on fetch.
        if unless_waiting and broker.client.llen(f"{broker.namespace}:{actor.queue_name}"):
            outage.succeeded()
            return True
        if delay is None:
            actor.send(*args)
        else:
            actor.send_with_options(args=args, delay=int(delay.total_seconds() * 1000))
    except redis.RedisError as exc:  # down, read-only after a failover, out of memory, ...
        outage.failed(actor.actor_name, exc)
        return False
    outage.succeeded()
    return True


def answers() -> bool:
    """Redis answers a PING now (logged with the outage when it does not)."""
    try:
        broker.client.ping()
    except redis.RedisError as exc:
        outage.failed("ping", exc)
        return False
    outage.succeeded()
    return True
