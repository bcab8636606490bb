"""The "many machines" deployment: PostgreSQL and Redis run as their own password-protected
services, migrations applied by `loom db upgrade`, two `loom api` and two `loom worker` processes
and one `loom scheduler` over them, each with a LOOM_HOME of its own as on its own machine; once
on a direct connection to PostgreSQL and once through PgBouncer in session pooling. Appends are
spread over both APIs while one worker is killed: every turn is embedded exactly once, and a turn
written through one API is found through the other."""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import psycopg
import pytest

from services.ports import free_port
from tests.separate.servers import MISSING, PgBouncer, Postgres, Redis

pytestmark = pytest.mark.skipif(
    bool(MISSING), reason=f"needs Debian's {' and '.join(MISSING)} (.ci/run installs them)"
)

LOOM = str(Path(sys.executable).parent / "loom")
TURNS = 200


def wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.2)
    return value


@pytest.fixture(scope="module")
def root() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="loom-separate-"))
    os.chmod(path, 0o711)  # the servers' user passes through to its directories
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def postgres(root) -> Iterator[Postgres]:
    server = Postgres.start(root)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def redis(root) -> Iterator[Redis]:
    server = Redis.start(root)
    yield server
    server.stop()


class Machines:
    """The processes, each with the environment an operator's unit file gives it."""

    def __init__(self, root: Path, database_url: str, redis_url: str) -> None:
        self.root, self.database_url, self.redis_url = root, database_url, redis_url
        self.procs: dict[str, subprocess.Popen] = {}
        self.ports: dict[str, int] = {}

    def env(self, machine: str, **extra: str) -> dict[str, str]:
        home = self.root / machine
        home.mkdir(parents=True, exist_ok=True)
        return {
            "PATH": os.environ["PATH"],
            "HOME": str(self.root / "user"),
            "LOOM_HOME": str(home / "loom"),
            "LOOM_DATABASE_URL": self.database_url,
            "LOOM_REDIS_URL": self.redis_url,
            "LOOM_STAGE_LEASE_SECONDS": "5",
            "LOOM_SWEEP_INTERVAL_SECONDS": "1",
            "LOOM_SWEEP_GRACE_SECONDS": "3",
            **extra,
        }

    def loom(self, *args: str, **extra: str) -> str:
        env = self.env("operator", **extra)
        done = subprocess.run([LOOM, *args], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def start(self, name: str, *command: str, **extra: str) -> None:
        log = open(self.root / f"{name}.log", "ab")  # noqa: SIM115 (kept open for the process's life)
        self.procs[name] = subprocess.Popen(
            [LOOM, *command], env=self.env(name, **extra), stdout=log, stderr=log
        )

    def api(self, name: str) -> None:
        self.ports[name] = free_port()
        self.start(name, "api", LOOM_PORT=str(self.ports[name]))

    def healthy(self, name: str) -> bool:
        try:
            return httpx.get(f"http://127.0.0.1:{self.ports[name]}/healthz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def stop(self) -> dict[str, int]:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        return {name: proc.wait(60) for name, proc in self.procs.items()}

    def printed(self) -> str:
        return "".join((self.root / f"{name}.log").read_text(errors="replace") for name in self.procs)


@contextmanager
def deployed(root: Path, database_url: str, redis_url: str) -> Iterator[Machines]:
    machines = Machines(root, database_url, redis_url)
    try:
        machines.loom("db", "upgrade")
        for name in ("api-1", "api-2"):
            machines.api(name)
        for name in ("worker-1", "worker-2"):
            machines.start(name, "worker")
        machines.start("scheduler", "scheduler")
        for name in ("api-1", "api-2"):
            wait_for(lambda name=name: machines.healthy(name), 120, f"{name}'s /healthz")
        yield machines
    finally:
        for proc in machines.procs.values():
            if proc.poll() is None:
                proc.kill()


@pytest.mark.parametrize("pooling", ["direct", "pgbouncer-session"])
def test_two_apis_and_two_workers_over_separate_servers(root, postgres, redis, pooling):
    bouncer = PgBouncer.start(root / pooling, postgres) if pooling != "direct" else None
    database_url = bouncer.url if bouncer else postgres.url
    namespace = f"many-{pooling}"
    # Loom's role is no superuser (migrations included: `loom db upgrade` ran as it).
    assert sql(postgres, "SELECT rolsuper, rolcreatedb FROM pg_roles WHERE rolname = current_user") == [
        (False, False)
    ]
    try:
        with deployed(root / pooling, database_url, redis.url) as machines:
            token = machines.loom("tokens", "create", "--namespace", namespace, "--role", "writer").strip()
            machines.loom("namespaces", "logging", namespace, "--on")
            apis = [
                httpx.Client(
                    base_url=f"http://127.0.0.1:{machines.ports[name]}",
                    headers={"Authorization": f"Bearer {token}"},
                    timeout=30,
                )
                for name in ("api-1", "api-2")
            ]
            for i in range(TURNS):
                body = {
                    "thread_id": f"t{i % 5}",
                    "role": "user",
                    "content": f"turn {i}: the invoice export for region {i % 7} moved to the night batch",
                    "msg_id": f"m{i}",
                }
                answer = apis[i % 2].post("/v1/conversation.append", json=body)
                assert answer.status_code == 200 and answer.json()["stored"], answer.text
                if i == TURNS // 2:
                    machines.procs["worker-1"].kill()  # the other worker, and the sweep, carry on

            def all_embedded() -> bool:
                return sql(
                    postgres,
                    "SELECT count(*) FROM embeddings WHERE namespace = %s AND vector IS NOT NULL",
                    namespace,
                ) == [(TURNS,)]

            wait_for(all_embedded, 120, "every turn embedded")
            assert sql(
                postgres,
                "SELECT count(*), count(DISTINCT turn_id) FROM embeddings WHERE namespace = %s",
                namespace,
            ) == [(TURNS, TURNS)]
            wait_for(
                lambda: not sql(postgres, "SELECT id FROM stage_runs WHERE status IN ('pending', 'running')"),
                60,
                "every run to finish",
            )
            assert sql(postgres, "SELECT count(*) FROM stage_runs WHERE status = 'failed'") == [(0,)]
            # Written through api-1 (even turns), found through api-2.
            hits = apis[1].post(
                "/v1/conversation.search", json={"query": "invoice export region 4 night batch"}
            )
            assert hits.status_code == 200 and [
                h for h in hits.json()["hits"] if int(h["msg_id"][1:]) % 2 == 0
            ]
            status = machines.loom("status", LOOM_PORT=str(machines.ports["api-1"]))
            assert all(f"{part:<9}up" in status for part in ("database", "broker", "api")), status
            codes = machines.stop()
            assert codes.pop("worker-1") == -signal.SIGKILL
            assert set(codes.values()) == {0}, (codes, machines.printed()[-3000:])
            assert "Traceback" not in machines.printed()
    finally:
        if bouncer:
            bouncer.stop()


def sql(postgres: Postgres, query: str, *params) -> list[tuple]:
    with psycopg.connect(postgres.url.replace("+psycopg", ""), connect_timeout=5) as conn:
        return conn.execute(query, params or None).fetchall()
