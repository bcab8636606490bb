"""Shared helpers for the benchmarks in bench/: run `loom up` in a throwaway LOOM_HOME, mint a
token, turn recording on, and watch the database until the worker has embedded what was appended
(appending is in ``appender.py``, CPU accounting in ``cpu.py``, the data set in ``longmemeval.py``).

``Loom`` reaches into none of Loom's code paths: those benchmarks drive Loom the way a user does
(the `loom` command and the HTTP API) and only read its database to see progress. The benchmarks
of one query path at scale (filtered, lexical, saved and substring search) call Loom's code
in-process against ``embedded_database``, a bare migrated PostgreSQL they load with COPY.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import psycopg  # noqa: E402

if TYPE_CHECKING:
    from appender import Appender

EMBEDDING_STAGE = "embedding"


class Clock:
    """Seconds spent in database statements, counted from SQLAlchemy's cursor events."""

    def __init__(self) -> None:
        self.db = 0.0

    def attach(self, engine) -> None:
        from sqlalchemy import event

        @event.listens_for(engine, "before_cursor_execute")
        def _start(conn, cursor, statement, params, context, many) -> None:
            conn.info["started"] = time.perf_counter()

        @event.listens_for(engine, "after_cursor_execute")
        def _stop(conn, cursor, statement, params, context, many) -> None:
            self.db += time.perf_counter() - conn.info.pop("started")


@contextmanager
def timed_asks(module, factory: str) -> Iterator[dict]:
    """The seconds a model spends answering while the block runs: ``module.factory`` (e.g.
    ``providers.llm.get_llm``) is wrapped so every model it builds times its ``ask``."""
    spent = {"seconds": 0.0}
    real = getattr(module, factory)

    class Timed:
        def __init__(self, inner) -> None:
            self.inner = inner

        def ask(self, *args):
            started = time.perf_counter()
            try:
                return self.inner.ask(*args)
            finally:
                spent["seconds"] += time.perf_counter() - started

    setattr(module, factory, lambda: Timed(real()))
    try:
        yield spent
    finally:
        setattr(module, factory, real)


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def percentile(values: list[float], q: float) -> float | None:
    """The q-th percentile (0..100) by linear interpolation; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def rounded(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


# --- running Loom --------------------------------------------------------------------------------


def without_broker() -> None:
    """Set this process's broker up on an address where nothing answers: its wake-ups fail fast
    and are skipped (a bench that needs its runs done delivers them itself)."""
    from workers import broker

    broker.setup("redis://127.0.0.1:9/0")


@contextmanager
def embedded_database(name: str, keep_home: bool = False) -> Iterator[str]:
    """A fresh embedded PostgreSQL in a throwaway LOOM_HOME, migrated to the head: yields its URL,
    which LOOM_DATABASE_URL (and the engine of this process) point at meanwhile. Leaving stops
    it and removes the home, unless ``keep_home``."""
    home = Path(tempfile.mkdtemp(prefix=f"loom-bench-{name}-"))
    os.environ["LOOM_HOME"] = str(home)
    os.environ.pop("LOOM_DATABASE_URL", None)
    from models import db, migrate
    from models.settings import get_settings
    from services import postgres

    try:
        log(f"starting the embedded PostgreSQL in {home}")
        postgres.start(home)
        url = postgres.url(home)
        os.environ["LOOM_DATABASE_URL"] = url
        get_settings.cache_clear()
        db.reset_engine()
        migrate.upgrade(url)
        yield url
    finally:
        db.reset_engine()
        try:
            postgres.stop(home)
        finally:
            if keep_home:
                log(f"kept {home}")
            else:
                shutil.rmtree(home, ignore_errors=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def loom_executable() -> str:
    candidate = Path(sys.executable).parent / "loom"
    if candidate.exists():
        return str(candidate)
    found = shutil.which("loom")
    if not found:
        raise RuntimeError("no `loom` command next to this Python or on PATH (pip install -e . first)")
    return found


class Loom:
    """`loom up` in a fresh LOOM_HOME on a free port. Use as a context manager: leaving it stops
    Loom with SIGINT (the way an operator does) and removes the home unless ``keep_home``."""

    def __init__(self, keep_home: bool = False, env: dict[str, str] | None = None) -> None:
        self.keep_home = keep_home
        self.extra_env = env or {}
        self.home: Path | None = None
        self.port: int | None = None
        self.proc: subprocess.Popen | None = None
        self._log_file = None

    # The environment every `loom` command of this instance runs with.
    @property
    def env(self) -> dict[str, str]:
        # Other LOOM_* settings pass through (so LOOM_EMBED_BATCH_SIZE=… reaches Loom and the
        # benchmark alike); the servers are always the embedded ones of this home.
        drop = ("LOOM_HOME", "LOOM_PORT", "LOOM_DATABASE_URL", "LOOM_REDIS_URL")
        env = {k: v for k, v in os.environ.items() if k not in drop}
        env.update(self.extra_env)
        env["LOOM_HOME"] = str(self.home)
        env["LOOM_PORT"] = str(self.port)
        return env

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        assert self.home is not None
        return self.home / "loom-up.log"

    def __enter__(self) -> Loom:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self, timeout: float = 300.0) -> None:
        self.home = Path(tempfile.mkdtemp(prefix="loom-bench-"))
        self.port = free_port()
        self._log_file = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        log(f"starting loom up (LOOM_HOME={self.home}, port {self.port}; log {self.log_path})")
        started = time.perf_counter()
        # A session of its own: a Ctrl-C on the benchmark must not reach Loom's children directly;
        # stop() signals `loom up`, which stops them in order.
        self.proc = subprocess.Popen(
            [loom_executable(), "up"],
            cwd=ROOT,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        with httpx.Client(timeout=2.0) as client:
            while True:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"loom up exited with {self.proc.returncode}:\n{self.log_tail()}")
                try:
                    if client.get(f"{self.base_url}/healthz").status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"loom up not healthy after {timeout:.0f}s:\n{self.log_tail()}")
                time.sleep(0.2)
        log(f"loom up healthy after {time.perf_counter() - started:.1f}s")

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            log("stopping loom up (SIGINT)")
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(90)
            except subprocess.TimeoutExpired:
                log("loom up did not stop in 90s; killing its process group")
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
            log(f"loom up exited with {self.proc.returncode}")
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
        if self.home is not None:
            self._stop_servers_left_behind()
            if self.keep_home:
                log(f"kept LOOM_HOME {self.home}")
            else:
                shutil.rmtree(self.home, ignore_errors=True)

    def _stop_servers_left_behind(self) -> None:
        """`loom up` stops its PostgreSQL and Redis on a clean exit; after a kill they run on,
        detached, so stop them here rather than leave them behind."""
        assert self.home is not None
        if not (self.home / "ports.json").exists():
            return
        from services import postgres, redis

        if (self.home / "postgres" / "postmaster.pid").exists():
            log("PostgreSQL still running; stopping it")
            try:
                postgres.stop(self.home)
            except Exception as exc:  # best effort
                log(f"could not stop PostgreSQL: {exc}")
        try:
            redis.stop(self.home)
        except Exception as exc:  # best effort
            log(f"could not stop Redis: {exc}")

    # --- the `loom` command and the database ---------------------------------------------------

    def cli(self, *args: str, env: dict[str, str] | None = None, timeout: float = 300) -> str:
        """Run a `loom` command of this instance (``env``: settings for that command alone)."""
        done = subprocess.run(
            [loom_executable(), *args],
            cwd=ROOT,
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if done.returncode != 0:
            raise RuntimeError(f"loom {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")
        return done.stdout

    def token(self, namespaces: Iterable[str], role: str = "admin") -> str:
        args = ["tokens", "create", "--role", role]
        for namespace in namespaces:
            args += ["--namespace", namespace]
        return self.cli(*args).strip().splitlines()[-1]

    def logging_on(self, namespace: str) -> None:
        self.cli("namespaces", "logging", namespace, "--on")

    @property
    def dsn(self) -> str:
        from services import postgres

        assert self.home is not None
        return postgres.url(self.home).replace("+psycopg", "")  # with the generated password

    def connect(self) -> psycopg.Connection:
        return psycopg.connect(self.dsn, autocommit=True)


# --- watching the worker -------------------------------------------------------------------------


def index_definitions(conn: psycopg.Connection, names: Iterable[str]) -> dict[str, str]:
    """Each index as the migrations made it, to be dropped before a bulk load and built again after
    it, on the partitioned table too (its own definition reads ``ON ONLY``, which would leave the
    partitions without)."""
    rows = conn.execute(
        "SELECT indexname, indexdef FROM pg_indexes WHERE indexname = ANY(%s)", (list(names),)
    ).fetchall()
    found = {name: definition.replace(" ON ONLY ", " ON ") for name, definition in rows}
    missing = set(names) - set(found)
    if missing:
        raise RuntimeError(f"indexes not in the migrated database: {sorted(missing)}")
    return found


def embedded_count(conn: psycopg.Connection, namespace: str) -> int:
    return conn.execute(
        "SELECT count(*) FROM embeddings WHERE namespace = %s AND vector IS NOT NULL", (namespace,)
    ).fetchone()[0]


def live_runs(conn: psycopg.Connection) -> int:
    """Embedding runs still pending or running: one index scan, cheap enough to poll often (a
    count of stored vectors reads every embedding row, ~3 ms of PostgreSQL CPU at 2,000 rows)."""
    return conn.execute(
        "SELECT count(*) FROM stage_runs WHERE stage = %s AND status IN ('pending', 'running')",
        (EMBEDDING_STAGE,),
    ).fetchone()[0]


def ledger_counts(conn: psycopg.Connection, namespace: str | None = None) -> Counter:
    """Embedding runs by status: all of them, or only those of one namespace's turns."""
    if namespace is None:
        rows = conn.execute(
            "SELECT status, count(*) FROM stage_runs WHERE stage = %s GROUP BY status", (EMBEDDING_STAGE,)
        )
    else:
        rows = conn.execute(
            "SELECT r.status, count(*) FROM stage_runs r "
            "JOIN embeddings e ON r.subject = 'embedding:' || e.id "
            "WHERE r.stage = %s AND e.namespace = %s GROUP BY r.status",
            (EMBEDDING_STAGE, namespace),
        )
    return Counter(dict(rows.fetchall()))


def progress(conn: psycopg.Connection, namespace: str) -> str:
    """One progress line: vectors stored and the embedding runs by status."""
    live = ledger_counts(conn)
    return (
        f"embedded {embedded_count(conn, namespace)}  ledger pending {live['pending']} "
        f"running {live['running']} skipped {live['skipped']} failed {live['failed']}"
    )


def without_vector(conn: psycopg.Connection, namespace: str) -> int:
    """Turns of the namespace that have no vector: screened (no embedding row), failed or pending."""
    return conn.execute(
        "SELECT count(*) FROM turns t LEFT JOIN embeddings e ON e.turn_id = t.id "
        "WHERE t.namespace = %s AND t.deleted_at IS NULL AND e.vector IS NULL",
        (namespace,),
    ).fetchone()[0]


def watch(
    conn: psycopg.Connection,
    appender: Appender,
    finished: Callable[[psycopg.Connection], bool],
    describe: Callable[[psycopg.Connection], str],
    interval: float = 0.2,
    report_every: float = 5.0,
    timeout: float = 3600.0,
) -> float:
    """Poll the database every ``interval`` seconds while (and after) the appender runs, until
    the appends are all done and ``finished(conn)``. Returns the perf_counter time it saw that."""
    started = time.perf_counter()
    next_report = started + report_every
    while True:
        appends_done = appender.stats.done
        if appender.stats.error is not None:
            appender.join()  # raises
        if appends_done and finished(conn):
            return time.perf_counter()
        now = time.perf_counter()
        if now >= next_report:
            sent, requested = appender.stats.sent, appender.stats.requested
            log(f"{now - started:6.1f}s  appended {sent}/{requested}  {describe(conn)}")
            next_report = now + report_every
        if now - started > timeout:
            raise TimeoutError(f"not finished after {timeout:.0f}s: {describe(conn)}")
        time.sleep(interval)


def worker_batches(conn: psycopg.Connection, batch_size: int, namespace: str | None = None) -> dict:
    """How the worker actually batched: the runs of one claim share ``started_at``, the vectors of
    one model call share ``embedded_at``. Summarises batch sizes, how long each took (claim to
    vectors stored) and how much of the window the worker was busy."""
    where = "AND e.namespace = %s" if namespace else ""
    params = (namespace,) if namespace else ()
    rows = conn.execute(
        "SELECT r.started_at, max(e.embedded_at), count(*), count(e.vector) "
        "FROM stage_runs r JOIN embeddings e ON r.subject = 'embedding:' || e.id "
        f"WHERE r.stage = 'embedding' AND r.status IN ('succeeded', 'skipped') {where} "
        "GROUP BY r.started_at ORDER BY r.started_at",
        params,
    ).fetchall()
    if not rows:
        return {"batches": 0}
    sizes = [n for _, _, n, _ in rows]
    spans = [(s.timestamp(), e.timestamp()) for s, e, _, _ in rows if e is not None]
    durations = [e - s for s, e in spans]
    busy, end_of_busy = 0.0, float("-inf")
    for s, e in sorted(spans):  # union of claim-to-store intervals
        if e > end_of_busy:
            busy += e - max(s, end_of_busy)
            end_of_busy = e
    window = max(e for _, e in spans) - min(s for s, _ in spans) if spans else 0.0
    return {
        "batches": len(rows),
        "batch_size_mean": rounded(statistics.fmean(sizes), 1),
        "batch_size_p50": rounded(percentile(sizes, 50), 1),
        "batch_size_min": min(sizes),
        "batch_size_max": max(sizes),
        "batches_under_16": sum(1 for n in sizes if n < 16),
        "turns_in_full_batches": sum(n for n in sizes if n >= batch_size),
        "batch_seconds_p50": rounded(percentile(durations, 50), 3),
        "batch_seconds_max": rounded(max(durations) if durations else None, 3),
        "first_claim_to_last_vector_s": rounded(window),
        "worker_busy_s": rounded(busy),
        "worker_busy_fraction": rounded(busy / window if window else None, 3),
        "sizes_in_order": sizes if len(sizes) <= 400 else None,
    }


# --- where the CPU goes --------------------------------------------------------------------------


def warm_up(loom: Loom, token: str, namespace: str, turns: int = 4, timeout: float = 300.0) -> float:
    """Load the model in the worker (by embedding a few throwaway turns in ``namespace``) and in
    the API (by one search), so a measurement does not include loading it. Returns seconds."""
    started = time.perf_counter()
    headers = {"Authorization": f"Bearer {token}"}
    with (
        httpx.Client(base_url=loom.base_url, headers=headers, timeout=timeout) as client,
        loom.connect() as conn,
    ):
        for i in range(turns):
            body = {
                "namespace": namespace,
                "thread_id": "warm-up",
                "role": "user" if i % 2 == 0 else "assistant",
                "content": f"Warm-up turn {i}: loading the embedding model before the measurement.",
                "msg_id": f"warm-up:{i}",
            }
            answer = client.post("/v1/conversation.append", json=body).raise_for_status().json()
            if not answer.get("stored"):
                raise RuntimeError(f"warm-up append not stored: {answer}")
        deadline = time.monotonic() + timeout
        while embedded_count(conn, namespace) < turns:
            if time.monotonic() > deadline:
                raise TimeoutError(f"warm-up turns not embedded after {timeout:.0f}s:\n{loom.log_tail()}")
            time.sleep(0.2)
        client.post(
            "/v1/conversation.search", json={"namespace": namespace, "query": "warm-up", "limit": 1}
        ).raise_for_status()
    seconds = time.perf_counter() - started
    log(f"warm-up done in {seconds:.1f}s (worker and API have the model loaded)")
    return seconds


def code_version() -> dict:
    """The commit Loom ran from, and whether files outside bench/ differed from it (read-only git)."""

    def git(*args: str) -> str:
        try:
            done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30)
        except OSError:
            return ""
        return done.stdout.rstrip() if done.returncode == 0 else ""  # porcelain lines start with a space

    changed = [
        line[3:]
        for line in git("status", "--porcelain", "--untracked-files=no").splitlines()
        if not line[3:].startswith("bench/")
    ]
    return {"commit": git("rev-parse", "--short", "HEAD") or None, "modified_files": changed}


# --- writing turns in-process, as the append does -----------------------------------------------

# A namespace that records, for benches that write through ``pipelines.appending`` themselves.
RECORDING = (
    "INSERT INTO namespaces (name, conversation_logging_enabled, created_at, updated_at) "
    "VALUES (:n, true, now(), now())"
)
