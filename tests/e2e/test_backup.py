"""`loom backup` while appends stream in, `loom restore` into a fresh LOOM_HOME elsewhere: every
turn answered `stored: true` before the backup began is there, search works on the restored copy,
and the tokens minted before still sign in. Both commands run as a user runs them."""

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from services import postgres, redis
from services.ports import free_port
from tests.e2e.conftest import Loom, wait_for
from tests.e2e.test_server_faults import Appender

pytestmark = pytest.mark.e2e

LOOM = str(Path(sys.executable).parent / "loom")


def loom_command(home: Path, *args: str) -> subprocess.CompletedProcess:
    user = home.parent / "user"
    user.mkdir(parents=True, exist_ok=True)
    env = {"PATH": os.environ["PATH"], "HOME": str(user), "LOOM_HOME": str(home)}
    return subprocess.run([LOOM, *args], env=env, capture_output=True, text=True, timeout=300)


def test_a_backup_taken_under_appends_restores_elsewhere_with_every_stored_turn(loom, scratch):
    loom.up()
    token = loom.cli("tokens", "create", "--namespace", "kept", "--role", "writer").strip()
    loom.cli("namespaces", "logging", "kept", "--on")
    appender = Appender(f"http://127.0.0.1:{loom.port}", token)
    appender.start()
    try:
        wait_for(lambda: appender.stored_since(0) >= 40, 60, "appends to flow")
        answered = list(appender.answers)  # every answer that had come when the backup began
        archive = scratch / "loom.backup"
        backed = loom_command(loom.home, "backup", str(archive))
        time.sleep(1)  # appends go on after the backup
    finally:
        appender.halt.set()
        appender.join(30)
    assert backed.returncode == 0, backed.stderr
    before = {i for _, i, answer, _ in answered if answer is not None and answer.json().get("stored")}
    assert len(before) >= 40
    assert stat.S_IMODE(archive.stat().st_mode) == 0o600
    content = archive.read_bytes()
    for secret in ("postgres.secret", "redis.secret", "operator.key"):
        assert (loom.home / secret).read_text().strip().encode() not in content, secret

    elsewhere = Loom(scratch / "restored" / "home", free_port())
    try:
        restored = loom_command(elsewhere.home, "restore", str(archive))
        assert restored.returncode == 0, restored.stderr
        again = loom_command(elsewhere.home, "restore", str(archive))
        said = [line for line in again.stderr.splitlines() if line.strip()]
        assert again.returncode != 0 and len(said) == 1 and "already holds Loom data" in said[0], said
        elsewhere.up()
        kept = {row[0] for row in elsewhere.sql("SELECT msg_id FROM turns WHERE namespace = 'kept'")}
        assert {f"m{i}" for i in before} <= kept
        http = httpx.Client(
            base_url=f"http://127.0.0.1:{elsewhere.port}", headers={"Authorization": f"Bearer {token}"}
        )

        def found() -> list[str]:
            body = {"query": "the nightly export moved to the new ledger", "limit": 5}
            answer = http.post("/v1/conversation.search", json=body)
            assert answer.status_code == 200, answer.text
            return [hit["msg_id"] for hit in answer.json()["hits"] if "semantic" in hit["found_by"]]

        assert wait_for(found, 60, "a semantic search on the restored copy")
    finally:
        if elsewhere.proc and elsewhere.proc.poll() is None:
            elsewhere.stop()
        postgres.stop(elsewhere.home)
        redis.stop(elsewhere.home)
