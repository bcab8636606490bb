"""`loom up` as a subprocess in a data directory of the test's, and what the tests ask of it."""

import json
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

from services import postgres, redis
from services.ports import free_port


def wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.1)


class Loom:
    def __init__(self, home: Path, port: int) -> None:
        self.home, self.port = home, port
        self.output = home.parent / "loom-up.log"  # what `loom up` and its children print
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("LOOM_")}
        self.env.update(
            LOOM_HOME=str(home),
            LOOM_PORT=str(port),
            LOOM_STAGE_LEASE_SECONDS="5",
            LOOM_SWEEP_INTERVAL_SECONDS="1",
            LOOM_SWEEP_GRACE_SECONDS="3",
            LOOM_EMBED_BATCH_SIZE="16",
        )
        self.proc: subprocess.Popen | None = None

    def cli(self, *args: str) -> str:
        return subprocess.run(
            [sys.executable, "-m", "cli", *args],
            env=self.env,
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        ).stdout

    def up(self, *options: str) -> None:
        # Its own process group, so a failed test can take down every child with it.
        with open(self.output, "ab") as output:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "cli", "up", *options],
                env=self.env,
                start_new_session=True,
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        # Generous: alone a start is healthy in seconds, but a busy CI machine has taken minutes.
        try:
            wait_for(
                lambda: self.healthy() or self.proc.poll() is not None, 300, "GET /healthz to answer 200"
            )
        except AssertionError as exc:
            raise AssertionError(f"{exc} from `loom up` in {self.home}; {self.tail()}") from None
        if self.proc.poll() is not None:
            raise AssertionError(
                f"`loom up` exited with {self.proc.returncode} before /healthz answered; {self.tail()}"
            )

    def tail(self, lines: int = 40) -> str:
        """The end of what `loom up` printed, for a failure's message."""
        printed = self.printed().splitlines()[-lines:]
        return "its log ends:\n" + "\n".join(printed) if printed else "it printed nothing"

    def healthy(self) -> bool:
        try:
            return httpx.get(f"http://127.0.0.1:{self.port}/healthz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGINT)
        return self.proc.wait(60)

    def printed(self) -> str:
        """The console of `loom up` and its children (warnings, and the lines a person needs)."""
        return self.output.read_text(errors="replace") if self.output.exists() else ""

    def logged(self, process: str) -> str:
        """What one process wrote to its log file (``services.logs``): up, api, worker, scheduler."""
        path = self.home / "logs" / f"{process}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def ports(self) -> dict[str, int]:
        return json.loads((self.home / "ports.json").read_text())

    def op(self, token: str, name: str, body: dict) -> dict:
        """An op over HTTP as ``token``'s holder: its JSON answer, never a 5xx."""
        answer = httpx.post(
            f"http://127.0.0.1:{self.port}/v1/{name}",
            json=body,
            headers={"Authorization": f"Bearer {token}"},
            timeout=30,
        )
        assert answer.status_code < 500, answer.text
        return answer.json()

    def sql(self, query: str, *params) -> list[tuple]:
        with psycopg.connect(postgres.url(self.home).replace("+psycopg", ""), connect_timeout=5) as conn:
            return conn.execute(query, params or None).fetchall()

    def worker_pid(self) -> int:
        return int((self.home / "run" / "worker.pid").read_text())

    def postmaster_pid(self) -> int | None:
        return _pid(self.home / "postgres" / "postmaster.pid")

    def redis_pid(self) -> int | None:
        return _pid(self.home / "redis" / "redis.pid")


def _pid(path: Path) -> int | None:
    """The pid a server wrote (None while there is none: os.kill(None, …) raises, never kills)."""
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


@contextmanager
def running_loom(prefix: str, recording: tuple[str, ...] = (), **env: str) -> Iterator[Loom]:
    """`loom up` in a data directory of its own (with ``env`` set), recording turned on in the
    ``recording`` namespaces; stopped and removed, servers included, whatever happened."""
    scratch = Path(tempfile.mkdtemp(prefix=prefix))
    loom = Loom(scratch / "home", free_port())
    loom.env.update(env)
    try:
        loom.up()
        for namespace in recording:
            loom.cli("namespaces", "logging", namespace, "--on")
        yield loom
    finally:
        if loom.proc and loom.proc.poll() is None:
            loom.stop()
        postgres.stop(loom.home)
        redis.stop(loom.home)
        shutil.rmtree(scratch, ignore_errors=True)


@pytest.fixture
def model():
    """A local OpenAI-compatible model server; ends by checking that no prompt held a high text."""
    from pipelines import screening
    from tests.support.openai_server import FakeOpenAI

    server = FakeOpenAI().start()
    yield server
    server.stop()
    sent = [message["content"] for messages in server.chat_calls for message in messages]
    assert not [text for text in sent if screening.is_high(text)]


@pytest.fixture
def scratch():
    """A directory of the test's own. Not pytest's tmp_path: pytest sessions running beside this
    one delete each other's older tmp_path trees, data directories of live servers included."""
    path = Path(tempfile.mkdtemp(prefix="loom-e2e-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def home(scratch):
    """A LOOM_HOME whose embedded servers are stopped after the test, whatever it left running."""
    from services import postgres, redis

    home = scratch / "home"
    yield home
    postgres.stop(home)
    redis.stop(home)


@pytest.fixture
def loom(scratch):
    loom = Loom(scratch / "home", free_port())
    yield loom
    if loom.proc and loom.proc.poll() is None:
        os.killpg(loom.proc.pid, signal.SIGKILL)
        loom.proc.wait()
    postgres.stop(loom.home)
    redis.stop(loom.home)
    print(loom.printed()[-4000:])  # shown when the test failed, with the end of each log file
    for process in ("up", "api", "worker", "scheduler"):
        print(f"--- {process}.log\n{loom.logged(process)[-3000:]}")
