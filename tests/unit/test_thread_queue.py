"""The client's PendingSyncQueue: persistent (it survives a killed process), in order, one entry a
thread however often it is saved, and a save made while a sync was under way is sent again."""

import os
import subprocess
import sys
import textwrap

from loom.threads import PendingSyncQueue


def test_the_queue_survives_a_killed_process_in_order(tmp_path):
    path = tmp_path / "sync-queue.sqlite3"
    child = textwrap.dedent(f"""
        import os, signal
        from pathlib import Path
        from loom.threads import PendingSyncQueue
        queue = PendingSyncQueue(Path({str(path)!r}))
        for name in ("T-a", "T-b", "T-c", "T-a"):
            queue.enqueue(name)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    done = subprocess.run([sys.executable, "-c", child], env={**os.environ}, timeout=60)
    assert done.returncode == -9
    queue = PendingSyncQueue(path)
    assert [entry.thread_id for entry in queue.all()] == ["T-a", "T-b", "T-c"]


def test_an_entry_saved_again_while_it_was_sent_stays_and_a_failure_waits(tmp_path):
    queue = PendingSyncQueue(tmp_path / "q.sqlite3")
    queue.enqueue("T-a")
    (sending,) = queue.due()
    queue.enqueue("T-a")  # saved again while the first save was on its way
    queue.done(sending)
    (again,) = queue.due()
    assert again.generation == sending.generation + 1
    queue.failed(again, "connection refused", wait=60)
    assert (
        queue.due() == []
        and queue.all()[0].attempts == 1
        and queue.all()[0].last_error == "connection refused"
    )
    queue.done(queue.all()[0])
    assert queue.all() == []


def test_an_entry_waiting_out_its_backoff_holds_the_ones_behind_it(tmp_path):
    queue = PendingSyncQueue(tmp_path / "q.sqlite3")
    for name in ("T-a", "T-b"):
        queue.enqueue(name)
    queue.failed(queue.due()[0], "the server is away", wait=60)
    assert queue.due() == []  # T-b is not sent before T-a
    assert [entry.thread_id for entry in queue.due(now=float("inf"))] == ["T-a", "T-b"]
