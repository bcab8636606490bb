"""The Dramatiq broker: Redis, shared by every worker host.

Nothing is built at import. A process calls ``setup`` once when it starts, with the Redis it
reaches (``loom api``, ``worker``, ``scheduler``, ``mcp`` and the CLI's acting commands, after
``services.running`` found the servers; the tests' conftest), and ``setup`` declares every stage's
actor on that broker. Sending before ``setup`` is a defect of the process and says so."""

import logging
import threading
import time
from datetime import timedelta

import dramatiq
import redis

from models.stages import Stage
from workers import stages
from workers.doorbell import DoorbellBroker

log = logging.getLogger(__name__)

NAMESPACE = "dramatiq"  # Dramatiq's Redis key prefix: queues are ``dramatiq:<stage>``
_lock = threading.Lock()
_broker: DoorbellBroker | None = None
_url: str | None = None


class NotSetUp(RuntimeError):
    """A message was to be sent, or a worker started, in a process that set up no broker."""


def setup(url: str) -> DoorbellBroker:
    """The process's broker on ``url``, every stage's actor declared on it; built once per URL
    (pointing the process at another Redis builds a new one). Connects to nothing yet: redis-py
    connects lazily, so writes still commit while Redis is down (the sweep re-sends their runs)."""
    global _broker, _url
    with _lock:
        if _broker is None or _url != url:
            # The client is built here because RedisBroker(url=...) drops any timeout given beside
            # the url: connecting to an unreachable Redis gives up after 2 s, a call to one that
            # stopped answering after 5 s.
            client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=5)
            _broker, _url = DoorbellBroker(client=client, namespace=NAMESPACE), url
            dramatiq.set_broker(_broker)
    declare_all()
    return _broker


def current() -> DoorbellBroker:
    """The broker ``setup`` built."""
    if _broker is None:
        raise NotSetUp("no broker is set up in this process (workers.broker.setup at its start)")
    return _broker


def actor(stage: Stage) -> dramatiq.Actor:
    """The stage's actor on this process's broker, declared on first use. Dramatiq does not retry
    on its own (``max_retries=0``): the ledger owns attempts and backoff, and a run whose body
    raised (the database went away mid-run) comes back when its lease lapses."""
    broker = current()
    if stage.actor in broker.actors:  # every send after the first: no lock on the append path
        return broker.get_actor(stage.actor)
    with _lock:
        if stage.actor not in broker.actors:
            # dramatiq.actor(fn, **options) as its overloads spell it: the decorator the options make
            dramatiq.actor(broker=broker, actor_name=stage.actor, queue_name=stage.queue, max_retries=0)(
                stages.body(stage)
            )
        return broker.get_actor(stage.actor)


def declare_all() -> None:
    """Every registered stage's actor declared, as a worker needs before it starts consuming."""
    for stage in stages.all_stages().values():
        actor(stage)


def workers_seen(within_ms: int = 2_000) -> int:
    """Worker processes that fetched from Redis within the last ``within_ms`` (Dramatiq's consumers
    stamp a heartbeat on every fetch, and an idle one fetches every second: workers.doorbell).
    0 also when Redis does not answer."""
    broker = current()
    try:
        return broker.client.zcount(
            f"{NAMESPACE}:__heartbeats__", int(time.time() * 1000) - within_ms, "+inf"
        )
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

    def failed(self, what: str, exc: Exception) -> None:
        with self._lock:
            first, self._down, self._failed_at = not self._down, True, time.monotonic()
        if first:
            log.warning("broker unavailable, runs wait for the sweep until it answers: %s (%s)", exc, what)

    def quiet(self) -> bool:
        return time.monotonic() - self._failed_at < self.QUIET_SECONDS

    def succeeded(self) -> None:
        if self._down:
            with self._lock:
                back, self._down, self._failed_at = self._down, False, -float("inf")
            if back:
                log.warning("broker answers again")


outage = _Outage()


def send(stage: Stage, *args, unless_waiting: bool = False, delay: timedelta | None = None) -> bool:
    """Enqueue one message for the stage's actor (after ``delay``, if given); False when Redis
    cannot take it (the runs stay ``pending`` in the ledger and the sweep sends them again).

    ``unless_waiting`` skips the message when one of the stage's queue is still waiting to be
    fetched: that one is fetched, and claims its runs, after this call, so it sees everything the
    caller committed before it. Under load that makes one message per batch, not one per run."""
    if unless_waiting and outage.quiet():
        return False  # a wake-up, during an outage: the sweep sends the runs once Redis answers
    declared = actor(stage)
    try:
        # The list Dramatiq's Redis broker pushes message ids onto and consumers pop on fetch.
        if unless_waiting and current().client.llen(f"{NAMESPACE}:{stage.queue}"):
            outage.succeeded()
            return True
        if delay is None:
            declared.send(*args)
        else:
            declared.send_with_options(args=args, delay=int(delay.total_seconds() * 1000))
    except redis.RedisError as exc:  # down, read-only after a failover, out of memory, ...
        outage.failed(stage.name, exc)
        return False
    outage.succeeded()
    return True


def answers() -> bool:
    """Redis answers a PING now (logged with the outage when it does not)."""
    try:
        current().client.ping()
    except redis.RedisError as exc:
        outage.failed("ping", exc)
        return False
    outage.succeeded()
    return True
