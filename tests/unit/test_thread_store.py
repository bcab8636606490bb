"""The client's LocalThreadStore on a temporary XDG data directory: the Thread model on the wire,
one pretty-printed JSON file a thread written atomically, list and the local search fallback."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
from loom.threads import (
    AgentStateKind,
    LocalThreadStore,
    MessageSnapshot,
    Thread,
    ThreadVisibility,
    ToolCall,
    data_dir,
)
from pydantic import ValidationError


@pytest.fixture
def store(tmp_path, monkeypatch) -> LocalThreadStore:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    return LocalThreadStore.from_xdg()


def a_thread(title: str, *said: str, **fields) -> Thread:
    thread = Thread(**fields)
    thread.metadata.title = title
    thread.conversation.messages += [MessageSnapshot(role="user", content=text) for text in said]
    return thread


def test_the_wire_shape_is_the_seeds_snake_case_with_snake_case_enums():
    thread = a_thread("Add auth", "Add error handling to login")
    thread.conversation.messages.append(
        MessageSnapshot(
            role="assistant",
            content="I'll read it.",
            tool_calls=[
                ToolCall(id="call_abc123", tool_name="read_file", arguments_json={"path": "src/auth.rs"})
            ],
        )
    )
    thread.agent_state.kind = AgentStateKind.waiting_for_user_input
    wire = json.loads(thread.model_dump_json())
    assert wire["id"].startswith("T-") and wire["id"][16] == "7"  # T-<uuidv7>
    assert wire["visibility"] == "organization" and wire["agent_state"]["kind"] == "waiting_for_user_input"
    assert wire["conversation"]["messages"][1]["tool_calls"][0]["arguments_json"] == {"path": "src/auth.rs"}
    assert wire["metadata"] == {"title": "Add auth", "tags": []}
    assert {"git_commits", "is_shared_with_support", "last_activity_at"} <= set(wire)
    assert Thread.model_validate(wire) == thread
    schema = Thread.model_json_schema()
    assert schema["properties"]["id"]["pattern"].startswith("^T-")


@pytest.mark.parametrize(
    "bad",
    [
        {"id": "T-not-a-uuid"},
        {"visibility": "everyone"},
        {"agent_state": {"kind": "Sleeping"}},
        {"surprise": 1},
    ],
)
def test_a_malformed_thread_is_refused_naming_the_field(bad):
    with pytest.raises(ValidationError) as refused:
        Thread.model_validate({**json.loads(Thread().model_dump_json()), **bad})
    assert next(iter(bad)) in str(refused.value)


def test_threads_are_pretty_printed_files_under_xdg_data_home(store, tmp_path):
    thread = a_thread("Add authentication to API", "hello")
    store.save(thread)
    path = tmp_path / "loom" / "threads" / f"{thread.id}.json"
    assert path.read_text().startswith('{\n  "id": ') and data_dir() == tmp_path / "loom"
    assert store.load(thread.id) == thread and store.load(Thread().id) is None
    store.delete(thread.id)
    assert not path.exists() and store.list() == []
    with pytest.raises(ValueError):
        store.load("../../etc/passwd")


def test_a_save_killed_midway_leaves_the_old_file_whole(store, tmp_path):
    thread = a_thread("before", "kept")
    store.save(thread)
    # A child process saves a much longer version and is killed inside the write.
    child = textwrap.dedent(f"""
        import os, signal
        from loom.threads import local
        real = os.replace
        def killed(*args):
            os.kill(os.getpid(), signal.SIGKILL)
        local.os.replace = killed
        store = local.LocalThreadStore(local.Path({str(store.root)!r}))
        thread = store.load({thread.id!r})
        thread.metadata.title = "after"
        thread.conversation.messages = thread.conversation.messages * 2000
        store.save(thread)
    """)
    done = subprocess.run([sys.executable, "-c", child], env={**os.environ}, timeout=60)
    assert done.returncode == -9
    assert store.load(thread.id) == thread  # the old file, whole
    assert [p.name for p in store.root.iterdir() if p.suffix == ".json"] == [f"{thread.id}.json"]


def test_list_is_newest_first_and_local_search_reads_every_field(store):
    older = a_thread("Add authentication to API", "fix the login redirect", git_branch="feature/auth")
    older.git_remote_url = "github.com/acme/api"
    older.git_commits = ["a1b2c3d4e5f6"]
    older.metadata.tags = ["security"]
    store.save(older)
    newer = a_thread("Speed up search", "the GIN index is missing")
    newer.touch()
    store.save(newer)
    assert [s.id for s in store.list()] == [newer.id, older.id]
    assert store.list()[0].message_count == 1 and store.list(limit=1)[0].id == newer.id
    for query in (
        "authentication",
        "FEATURE/AUTH",
        "github.com/acme",
        "a1b2c3d",
        "security",
        "login redirect",
    ):
        assert [s.id for s in store.search(query)] == [older.id], query
    assert store.search("b2c3") == []  # a SHA matches by its prefix only
    assert [s.id for s in store.search("gin index")] == [newer.id]


def test_private_threads_are_marked_private():
    thread = Thread()
    thread.make_private()
    assert thread.is_private and thread.visibility == ThreadVisibility.private
