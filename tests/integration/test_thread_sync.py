"""The client library against a live API server: two clients editing one thread (409, merge, both
sides' messages kept), private threads never sent (a recording proxy in front of the server sees
every request), and threads saved while the server is away synced in order and exactly once by
the next save."""

import uuid

import pytest
from loom.threads import (
    LocalThreadStore,
    MessageSnapshot,
    PendingSyncQueue,
    SyncingThreadStore,
    Thread,
    ThreadSyncClient,
)

from ops.caller import create_token
from services.ports import free_port
from tests.support.recording_proxy import RecordingProxy
from tests.support.waits import wait_until


@pytest.fixture
def token(database) -> str:
    return create_token([f"sync-{uuid.uuid4().hex[:8]}"], "writer")


@pytest.fixture
def proxy(live_api):
    proxy = RecordingProxy(live_api).start()
    yield proxy
    proxy.stop()


def store(root, url: str, token: str, background: bool = False) -> SyncingThreadStore:
    return SyncingThreadStore(
        LocalThreadStore(root / "threads"),
        ThreadSyncClient(url, token),
        PendingSyncQueue(root / "sync-queue.sqlite3"),
        background=background,
    )


def say(thread: Thread, *texts: str) -> Thread:
    thread.conversation.messages += [MessageSnapshot(role="user", content=text) for text in texts]
    thread.touch()
    return thread


def test_two_clients_edit_one_thread_and_the_409_merges_both_sides(tmp_path, live_api, token):
    a, b = store(tmp_path / "a", live_api, token), store(tmp_path / "b", live_api, token)
    thread = say(Thread(), "one")
    a.save_and_sync(thread)
    b.local.save(b.sync_client.get(thread.id))  # b resumes it on another machine
    a.save_and_sync(say(a.load(thread.id), "from a"))
    report = b.save_and_sync(say(b.load(thread.id), "from b"))
    assert report.merged == [thread.id]
    on_server = a.sync_client.get(thread.id)
    assert [m.content for m in on_server.conversation.messages] == ["one", "from a", "from b"]
    assert on_server.version == 3 and b.load(thread.id).version == 3


def test_a_private_thread_is_never_sent(tmp_path, proxy, token):
    client = store(tmp_path, proxy.url, token)
    secret = say(Thread(), "the private codebase")
    secret.make_private()
    client.save_and_sync(secret)
    shared = say(Thread(), "shared work")
    client.save_and_sync(shared)
    sent = b"".join(path.encode() + body for _, path, body in proxy.seen)
    assert shared.id.encode() in sent and secret.id.encode() not in sent
    assert client.load(secret.id) is not None and client.sync_client.get(secret.id) is None


def test_threads_saved_while_the_server_is_away_are_synced_in_order_once_by_the_next_save(
    tmp_path, proxy, token
):
    away = store(tmp_path, f"http://127.0.0.1:{free_port()}", token)
    saved = [say(Thread(), f"offline {i}") for i in range(3)]
    for thread in saved:
        away.save(thread)
    report = away.sync()
    assert (
        report.failed
        and report.waiting == 3
        and [t.id for t in saved] == [e.thread_id for e in away.pending_sync.all()]
    )

    back = store(tmp_path, proxy.url, token, background=True)  # the server is back
    fourth = say(Thread(), "online again")
    back.save(fourth)
    wait_until(lambda: not back.pending_sync.all(), timeout=30, what="the queue to drain")
    puts = [path.split("/")[3].split("?")[0] for method, path, _ in proxy.seen if method == "PUT"]
    assert puts == [t.id for t in [*saved, fourth]]  # in order, each once
    assert all(back.sync_client.get(t.id).version == 1 for t in [*saved, fourth])
    assert all(back.load(t.id).version == 1 for t in saved)


def test_the_example_integration_records_a_session_on_the_server(tmp_path, live_api, token):
    import os
    import subprocess
    import sys

    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path), "LOOM_URL": live_api, "LOOM_TOKEN": token}
    done = subprocess.run(
        [sys.executable, "integrations/coding-agent/record_session.py", "--workspace", str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    thread = ThreadSyncClient(live_api, token).get(done.stdout.strip())
    assert [m.role for m in thread.conversation.messages] == ["user", "assistant", "tool", "assistant"]
    assert thread.agent_state.kind == "waiting_for_user_input" and thread.version >= 1
