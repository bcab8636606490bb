"""The thread commands against a live API server, on a temporary XDG home: loom login, private
sessions never synced, loom share, loom resume (the seed's lines, and warnings when the workspace
moved), loom threads search (the server's, or this machine's when it is away) and sync."""

import json
import stat
import subprocess
import uuid

import pytest
from loom.threads import MessageSnapshot, SyncingThreadStore, Thread, snapshot_git_state
from typer.testing import CliRunner

import cli
from ops.caller import create_token
from services.ports import free_port


def git(repo, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture
def home(tmp_path, monkeypatch, database):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("LOOM_URL", raising=False)
    monkeypatch.delenv("LOOM_TOKEN", raising=False)
    repo = tmp_path / "project"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "-c", "user.email=d@e.x", "-c", "user.name=D", "commit", "-q", "--allow-empty", "-m", "first")
    monkeypatch.chdir(repo)
    return tmp_path


def loom(*args: str):
    return CliRunner().invoke(cli.app, list(args))


def a_session(title: str, *said: str) -> Thread:
    thread = Thread(workspace_root=".")
    thread.metadata.title = title
    thread.conversation.messages = [MessageSnapshot(role="user", content=text) for text in said]
    return thread


def test_login_share_resume_search_and_sync(home, live_api):
    token = create_token([f"cli-{uuid.uuid4().hex[:8]}"], "writer")
    logged = loom("login", "--url", live_api, "--token", token)
    assert logged.exit_code == 0, logged.output
    saved = home / "config" / "loom" / "client.json"
    assert json.loads(saved.read_text())["url"] == live_api and stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert loom("login", "--url", live_api, "--token", "loom_wrong").exit_code == 2

    from commands.threads import the_store

    store: SyncingThreadStore = the_store()
    thread = a_session("Add authentication to API", "fix the login redirect")
    thread.workspace_root = str(home / "project")
    snapshot_git_state(thread, home / "project")
    store.save_and_sync(thread)

    shared = loom("share", thread.id, "--visibility", "public")
    assert shared.exit_code == 0 and store.sync_client.get(thread.id).visibility == "public", shared.output
    assert loom("threads", "share", thread.id, "--support").exit_code == 0
    assert store.sync_client.get(thread.id).is_shared_with_support

    resumed = loom("resume", thread.id)
    lines = resumed.output.splitlines()
    assert lines[:3] == [f"Resuming thread: {thread.id}", 'Title: "Add authentication to API"', "Messages: 1"]
    assert lines[3] == "Last activity: just now" and lines[4].startswith("Git: main @ ")
    git(home / "project", "checkout", "-q", "-b", "feature/auth")
    assert "warning: the branch changed: main → feature/auth" in loom("resume", thread.id).output

    assert thread.id in loom("threads", "search", "login redirect").output

    started = loom("new", "--title", "Rate limiter spike")  # a new session: synced, in this workspace
    assert started.exit_code == 0, started.output
    new_id = started.stdout.strip()
    on_server = store.sync_client.get(new_id)
    assert on_server.metadata.title == "Rate limiter spike" and on_server.git_branch == "feature/auth"
    assert on_server.workspace_root == str(home / "project") and not on_server.is_private

    private = loom("private", "--title", "secret spike")
    assert private.exit_code == 0
    private_id = private.output.strip()
    assert store.load(private_id).is_private and loom("threads", "sync").exit_code == 0
    assert store.sync_client.get(private_id) is None  # never sent
    assert private_id in loom("threads", "list").output
    assert loom("share", private_id, "--visibility", "organization").exit_code == 2


def test_with_the_server_away_sync_waits_and_search_reads_this_machine(home, live_api, monkeypatch):
    token = create_token([f"cli-{uuid.uuid4().hex[:8]}"], "writer")
    monkeypatch.setenv("LOOM_URL", f"http://127.0.0.1:{free_port()}")
    monkeypatch.setenv("LOOM_TOKEN", token)
    from commands.threads import the_store

    thread = a_session("Offline refactor", "rename the ledger module")
    the_store().save(thread)
    away = loom("threads", "sync")
    assert away.exit_code == 75 and thread.id in away.output
    assert thread.id in loom("threads", "search", "ledger module").output  # this machine's, meanwhile
    monkeypatch.setenv("LOOM_URL", live_api)
    back = loom("threads", "sync")
    assert back.exit_code == 0 and back.output.startswith("sent 1"), back.output
    assert the_store().sync_client.get(thread.id).version == 1
