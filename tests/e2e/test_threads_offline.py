"""Coding-session threads saved while `loom up` is stopped: kept on the machine and queued, synced
by `loom threads sync` once it runs, and found by conversation.search (recording on)."""

import os
import subprocess
import sys

import httpx
import pytest
from loom.threads import (
    LocalThreadStore,
    MessageSnapshot,
    PendingSyncQueue,
    SyncingThreadStore,
    Thread,
    ThreadSyncClient,
)

from tests.e2e.conftest import wait_for

pytestmark = pytest.mark.e2e

SAID = [
    "move the invoices to the new ledger",
    "the export job reads parquet from the finance bucket",
    "rotate the staging database credentials",
]


def test_threads_saved_while_loom_is_down_are_synced_and_searchable(loom, scratch):
    url = f"http://127.0.0.1:{loom.port}"
    data = scratch / "client"
    store = SyncingThreadStore(
        LocalThreadStore(data / "loom" / "threads"),
        ThreadSyncClient(url, "loom_not-yet"),  # the server is not up: saves wait in the queue
        PendingSyncQueue(data / "loom" / "sync-queue.sqlite3"),
        background=False,
    )
    saved = []
    for text in SAID:
        thread = Thread()
        thread.metadata.title = text[:30]
        thread.conversation.messages = [MessageSnapshot(role="user", content=text)]
        store.save(thread)
        saved.append(thread.id)
    assert store.sync().failed and len(store.pending_sync.all()) == 3

    loom.up()
    loom.cli("namespaces", "logging", "dev", "--on")
    token = loom.cli("tokens", "create", "--namespace", "dev", "--role", "writer").strip()
    env = {**os.environ, "XDG_DATA_HOME": str(data), "LOOM_URL": url, "LOOM_TOKEN": token}
    synced = subprocess.run(
        [sys.executable, "-m", "cli", "threads", "sync"], env=env, capture_output=True, text=True, timeout=120
    )
    assert synced.returncode == 0 and synced.stdout.startswith("sent 3"), synced.stdout + synced.stderr

    headers = {"Authorization": f"Bearer {token}"}
    for thread_id in saved:
        assert httpx.get(f"{url}/api/threads/{thread_id}", headers=headers).json()["version"] == 1

    def found() -> set[str]:
        hits = set()
        for text in SAID:
            body = {"namespace": "dev", "query": text, "limit": 3}
            answer = httpx.post(f"{url}/v1/conversation.search", json=body, headers=headers).json()
            hits |= {hit["thread_id"] for hit in answer.get("hits", [])[:1]}
        return hits

    wait_for(lambda: found() == set(saved), 120, "the three threads found by conversation.search")
