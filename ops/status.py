"""The system at a glance, for ``GET /metrics``, ``GET /healthz`` and ``loom status``: is the
database up, is the broker up, the stage ledger by stage and status, how long the oldest pending
run of each stage has waited, each stage's Dramatiq queue, and the embedder's recent throughput.

Reading the state starts nothing and never hangs: every call to a server runs on a thread of its
own and is given up after ``TIMEOUT`` seconds (a server that accepts connections and never answers
then counts as down), and the database's statements carry a ``statement_timeout`` too.
"""

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import redis
from sqlalchemy import Engine, create_engine

from models.settings import get_settings
from models.stage_run import STATUSES
from pipelines import ledger_stats
from services import Endpoints, postgres
from services import redis as embedded_redis
from workers import broker, stages

TIMEOUT = 2.0  # seconds: the most any one probe of a server may take
API_TIMEOUT = 1.0
THROUGHPUT_WINDOWS = {"1m": 60, "5m": 300}  # seconds, as spelled in models.queries.stage_runs.SNAPSHOT


@dataclass(frozen=True)
class Check:
    ok: bool
    error: str | None = None

    @property
    def label(self) -> str:
        """``ok`` or ``error: <what went wrong>`` (for admins and operators only: it names hosts)."""
        return "ok" if self.ok else f"error: {self.error}"


@dataclass(frozen=True)
class Stage:
    runs: dict[str, int] | None  # every status, 0 when none; None when the database is down
    oldest_pending_seconds: float | None  # 0 when nothing is pending
    queue: str
    queued: dict[str, int] | None  # ready | delayed | dead messages; None when the broker is down


@dataclass(frozen=True)
class Snapshot:
    database: Check
    broker: Check
    stages: dict[str, Stage]
    embedded_per_second: dict[str, float] | None  # by window (1m, 5m); None when unknown
    seconds: float  # how long taking the snapshot took
    errors: list[str] = field(default_factory=list)  # reads that failed while their server was up

    @property
    def up(self) -> bool:
        return self.database.ok and self.broker.ok


def endpoints() -> Endpoints:
    """Where the database and the broker are, starting nothing: the configured URLs, else the
    embedded servers' (``services.postgres.url`` / ``services.redis.url``, as ``services.running``
    resolves them)."""
    settings = get_settings()
    return Endpoints(
        settings.database_url or postgres.url(settings.home),
        settings.redis_url or embedded_redis.url(settings.home),
    )


def stage_queues() -> tuple[str, dict[str, str]]:
    """The broker's key namespace and each registered stage's queue."""
    return broker.NAMESPACE, {name: stage.queue for name, stage in stages.all_stages().items()}


def bounded(calls: dict[str, Callable[[], Any]], timeout: float = TIMEOUT) -> dict[str, Any]:
    """Run the calls side by side, each on a daemon thread; answer each one's result, or the
    exception it raised, or a ``TimeoutError`` when it did not return within ``timeout``."""
    results: dict[str, Any] = {}

    def run(name: str, call: Callable[[], Any]) -> None:
        try:
            results[name] = call()
        except Exception as exc:  # noqa: BLE001 - handed back to the caller
            results[name] = exc

    threads = [
        threading.Thread(target=run, args=item, name=f"loom-status-{item[0]}", daemon=True)
        for item in calls.items()
    ]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    answered = dict(results)
    return {name: answered.get(name, TimeoutError(f"no answer within {timeout:g} s")) for name in calls}


def describe(exc: BaseException) -> str:
    """One line: the error's type and the first line of what it says. SQLAlchemy wraps the
    driver's error with the statement and a link: the driver's own says what went wrong."""
    cause = getattr(exc, "orig", None) or exc
    said = str(cause).strip().splitlines()
    return f"{type(cause).__name__}: {said[0] if said else ''}".strip()[:300]


def _check(result: Any) -> Check:
    return Check(False, describe(result)) if isinstance(result, BaseException) else Check(True)


class Probe:
    """Reads the database and the broker at fixed endpoints, over connections of its own (one
    pooled database connection, one Redis connection pool), so a probe never waits behind the
    application's pool."""

    def __init__(self, at: Endpoints | None = None, timeout: float = TIMEOUT) -> None:
        self.endpoints = at or endpoints()
        self.timeout = timeout
        self._engine: Engine = create_engine(
            self.endpoints.database_url,
            pool_size=1,
            max_overflow=2,
            pool_timeout=timeout,
            pool_pre_ping=True,
            connect_args={"connect_timeout": max(1, math.ceil(timeout))},
        )
        self._redis = redis.Redis.from_url(
            self.endpoints.redis_url, socket_connect_timeout=timeout, socket_timeout=timeout
        )
        self._queues: tuple[str, dict[str, str]] | None = None
        self._recent: tuple[float, Snapshot] | None = None
        self._recent_lock = threading.Lock()

    def close(self) -> None:
        self._engine.dispose()
        self._redis.close()

    def recent_snapshot(self) -> "Snapshot":
        """A snapshot shared by the reads of ``LOOM_METRICS_CACHE_SECONDS`` (scrapes, the
        dashboard's health page): each one counts the whole ledger."""
        with self._recent_lock:
            now, ttl = time.monotonic(), get_settings().metrics_cache_seconds
            if self._recent is None or now - self._recent[0] >= ttl:
                self._recent = (now, self.snapshot())
            return self._recent[1]

    # --- the two probes: is it up ------------------------------------------------------------

    def _database(self, read_stats: bool) -> Any:
        with self._engine.connect() as conn:
            # Answering this is what "up" means; it also bounds the statements that follow.
            ledger_stats.bound(conn, self.timeout)
            if not read_stats:
                return None
            try:
                return ledger_stats.snapshot(conn)
            except Exception as exc:  # noqa: BLE001 - up, but the read failed
                return _ReadFailed(exc)

    def _broker(self, keys: list[tuple[str, str]]) -> dict[str, int]:
        pipe = self._redis.pipeline(transaction=False)
        pipe.ping()
        for _, key in keys:
            if key.endswith(".XQ"):
                pipe.zcard(key)  # dead letters are a sorted set
            else:
                pipe.llen(key)
        _, *lengths = pipe.execute()
        return {name: length for (name, _), length in zip(keys, lengths, strict=True)}

    def checks(self) -> dict[str, Check]:
        """database and broker: ok, or what went wrong (side by side, each bounded)."""
        results = bounded(
            {"database": lambda: self._database(False), "broker": lambda: self._broker([])}, self.timeout
        )
        return {name: _check(result) for name, result in results.items()}

    # --- the snapshot ------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        started = time.perf_counter()
        if self._queues is None:
            self._queues = stage_queues()
        namespace, queues = self._queues
        keys = [
            (f"{stage}:{state}", f"{namespace}:{queue}{suffix}")
            for stage, queue in queues.items()
            for state, suffix in (("ready", ""), ("delayed", ".DQ"), ("dead", ".XQ"))
        ]
        results = bounded(
            {"database": lambda: self._database(True), "broker": lambda: self._broker(keys)}, self.timeout
        )
        database, broker = _check(results["database"]), _check(results["broker"])
        errors = []
        row = results["database"] if database.ok else None
        if isinstance(row, _ReadFailed):
            errors.append(f"reading the ledger: {describe(row.exc)}")
            row = None
        counts, ages, embedded = row if row is not None else ([], {}, None)
        by_stage = ledger_stats.by_stage(counts)
        lengths = results["broker"] if broker.ok else None
        stages = {}
        for stage in sorted(set(queues) | set(by_stage)):
            queue = queues.get(stage, stage)
            stages[stage] = Stage(
                runs=by_stage.get(stage, dict.fromkeys(STATUSES, 0)) if row is not None else None,
                oldest_pending_seconds=float(ages.get(stage, 0)) if row is not None else None,
                queue=queue,
                queued=(
                    {state: lengths[f"{stage}:{state}"] for state in ("ready", "delayed", "dead")}
                    if lengths is not None and stage in queues
                    else None
                ),
            )
        throughput = None
        if embedded is not None:
            short, long = embedded
            throughput = {
                "1m": short / THROUGHPUT_WINDOWS["1m"],
                "5m": long / THROUGHPUT_WINDOWS["5m"],
            }
        return Snapshot(database, broker, stages, throughput, time.perf_counter() - started, errors)


@dataclass(frozen=True)
class _ReadFailed:
    exc: Exception


def probe_api(api_url: str, timeout: float = API_TIMEOUT) -> Check:
    """Does the API at ``api_url`` (``Settings.local_api_url``) answer ``GET /healthz`` (200, or
    503 when it is up but degraded)?"""
    try:
        answer = httpx.get(f"{api_url}/healthz", timeout=timeout)
    except httpx.HTTPError as exc:
        return Check(False, describe(exc))
    if answer.status_code not in (200, 503):
        return Check(False, f"GET /healthz answered {answer.status_code}")
    return Check(True)
