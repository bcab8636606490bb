"""The client commands of coding-session threads: ``loom login`` and ``loom threads list | search |
resume | share | private | sync`` (``loom resume``, ``loom share`` and ``loom private`` too, as
the seed spells them). They run on the developer's machine against the local store
(``$XDG_DATA_HOME/loom/threads``) and the server ``loom login`` saved; no embedded server starts."""

import json
import os
import stat
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from loom.errors import ConnectionFailed, LoomError
from loom.threads import (
    SyncingThreadStore,
    Thread,
    ThreadSyncClient,
    ThreadVisibility,
    detect_repo_status,
    snapshot_git_state,
)

from commands.console import fail
from services import TEMPFAIL as UNREACHABLE  # saved locally, the server can be tried again later

threads_app = typer.Typer(no_args_is_help=True, help="Coding-session threads: the local store and its sync.")


def config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "loom" / "client.json"


def server() -> tuple[str, str] | None:
    """The server URL and token: LOOM_URL and LOOM_TOKEN, else what ``loom login`` saved."""
    saved = {}
    if config_path().exists():
        saved = json.loads(config_path().read_text())
    url = os.environ.get("LOOM_URL") or saved.get("url")
    token = os.environ.get("LOOM_TOKEN") or saved.get("token")
    return (url, token) if url and token else None


def the_store() -> SyncingThreadStore:
    found = server()
    client = ThreadSyncClient(*found) if found else None
    return SyncingThreadStore.from_xdg(client, background=False)


def login(
    url: Annotated[str, typer.Option(help="the Loom server, e.g. http://127.0.0.1:7777")],
    token: Annotated[str | None, typer.Option(help="a bearer token (else LOOM_TOKEN, else asked)")] = None,
) -> None:
    """Save the server and token the thread commands use (checked against the server first)."""
    token = token or os.environ.get("LOOM_TOKEN") or typer.prompt("token", hide_input=True)
    client = ThreadSyncClient(url, token)
    try:
        client.list(limit=1)
    except ConnectionFailed as exc:
        raise fail(exc.reason, UNREACHABLE) from exc
    except LoomError as exc:
        raise fail(f"the server refused the token: {exc.reason}") from exc
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"url": url.rstrip("/"), "token": token}))
    path.chmod(stat.S_IRUSR | stat.S_IWUSR)  # the token is a secret
    print(f"logged in to {url}")


def ago(moment: datetime) -> str:
    seconds = max((datetime.now(UTC) - moment).total_seconds(), 0)
    for unit, size in (("day", 86_400), ("hour", 3_600), ("minute", 60)):
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {unit}{'s' if count != 1 else ''} ago"
    return "just now"


def git_line(thread: Thread) -> str | None:
    if not thread.git_branch and not thread.git_current_commit_sha:
        return None
    sha = (thread.git_current_commit_sha or "")[:7]
    dirty = " (dirty)" if thread.git_end_dirty else ""
    return f"{thread.git_branch or '(detached)'} @ {sha}{dirty}"


@threads_app.command("list")
def list_threads(
    limit: Annotated[int, typer.Option(help="at most this many")] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="one JSON object a line")] = False,
) -> None:
    """The threads stored on this machine, newest first."""
    for summary in the_store().list(limit):
        if as_json:
            print(summary.model_dump_json())
        else:
            when = ago(summary.last_activity_at)
            print(f"{summary.id}  {when:>14}  {summary.message_count:>4} msgs  {summary.title or ''}")


@threads_app.command("search")
def search(
    query: Annotated[str, typer.Argument(help="words, a branch, a repository, a commit SHA prefix")],
    limit: Annotated[int, typer.Option(help="at most this many")] = 20,
    local: Annotated[bool, typer.Option(help="search this machine's threads only")] = False,
) -> None:
    """The server's full-text and git search; this machine's threads when it is away."""
    store = the_store()
    if not local and store.sync_client is not None:
        try:
            for found in store.sync_client.search(query, limit):
                print(f"{found['id']}  {found.get('git_branch') or '-':<20}  {found.get('title') or ''}")
            return
        except ConnectionFailed:
            print("the server is away: searching this machine's threads", file=sys.stderr)
    for summary in store.search(query, limit):
        print(f"{summary.id}  {summary.git_branch or '-':<20}  {summary.title or ''}")


def resume(thread_id: Annotated[str, typer.Argument(help="the thread's id, T-…")]) -> None:
    """Resume a thread: what it is, where it stood, and whether the workspace moved since."""
    store = the_store()
    try:
        thread = store.load(thread_id)
    except ValueError as exc:
        raise fail(str(exc)) from exc
    if thread is None and store.sync_client is not None:
        try:
            thread = store.sync_client.get(thread_id)
        except ConnectionFailed as exc:
            raise fail(f"{thread_id} is not on this machine and {exc.reason}", UNREACHABLE) from exc
        if thread is not None:
            store.local.save(thread)  # resumed here from now on
    if thread is None:
        raise fail(f"no thread {thread_id} here or on the server")
    print(f"Resuming thread: {thread.id}")
    print(f'Title: "{thread.metadata.title or "(untitled)"}"')
    print(f"Messages: {len(thread.conversation.messages)}")
    print(f"Last activity: {ago(thread.last_activity_at)}")
    if line := git_line(thread):
        print(f"Git: {line}")
    here = detect_repo_status(Path.cwd())
    if thread.workspace_root and Path(thread.workspace_root).resolve() != Path.cwd().resolve():
        print(
            f"warning: the thread's workspace is {thread.workspace_root}, not {Path.cwd()}", file=sys.stderr
        )
    if here is not None and thread.git_branch and here.branch != thread.git_branch:
        print(f"warning: the branch changed: {thread.git_branch} → {here.branch}", file=sys.stderr)
    if here is not None and thread.git_current_commit_sha and here.head_sha != thread.git_current_commit_sha:
        print(
            f"warning: HEAD moved: {thread.git_current_commit_sha[:7]} → {(here.head_sha or '')[:7]}",
            file=sys.stderr,
        )


def share(
    thread_id: Annotated[str, typer.Argument(help="the thread's id, T-…")],
    visibility: Annotated[str | None, typer.Option(help="organization, private or public")] = None,
    support: Annotated[bool, typer.Option("--support", help="share it with support")] = False,
) -> None:
    """Change who may read a thread, and sync it now."""
    if visibility is None and not support:
        raise fail("say --visibility organization|private|public, or --support")
    if visibility is not None and visibility not in [v.value for v in ThreadVisibility]:
        raise fail("--visibility must be one of organization, private, public")
    store = the_store()
    thread = store.load(thread_id)
    if thread is None:
        raise fail(f"no thread {thread_id} on this machine")
    if thread.is_private:
        raise fail(f"{thread_id} is a private session: it never leaves this machine")
    if visibility is not None:
        thread.visibility = ThreadVisibility(visibility)
    thread.is_shared_with_support = thread.is_shared_with_support or support
    _save_and_sync(store, thread)
    print(
        f"{thread_id}: {thread.visibility.value}"
        + (", shared with support" if thread.is_shared_with_support else "")
    )


def _started(title: str | None) -> Thread:
    """A new thread of this workspace, its title and git state as they are now."""
    thread = Thread(workspace_root=str(Path.cwd()), cwd=str(Path.cwd()))
    thread.metadata.title = title
    snapshot_git_state(thread, Path.cwd())
    return thread


def new(title: Annotated[str | None, typer.Option(help="the session's title")] = None) -> None:
    """Start a coding-session thread of this workspace, synced to the server (kept on this machine
    and synced later when the server is away). Prints its id: pass it to the agent, `loom resume`."""
    thread = _started(title)
    store = the_store()
    if store.sync_client is None:
        store.save(thread)
        print("saved on this machine only: run loom login to sync it", file=sys.stderr)
    else:
        try:
            store.save_and_sync(thread)
        except LoomError as exc:  # saved here and queued: the next save or `loom threads sync` sends it
            print(f"saved on this machine, not synced yet: {exc.reason}", file=sys.stderr)
    print(thread.id)


def private(title: Annotated[str | None, typer.Option(help="the session's title")] = None) -> None:
    """Start a local-only session (is_private, visibility private): it is never synced."""
    thread = _started(title)
    thread.make_private()
    the_store().save(thread)
    print(thread.id)


@threads_app.command("sync")
def sync() -> None:
    """Send the threads waiting to be synced, in order."""
    store = the_store()
    if store.sync_client is None:
        raise fail("no server: run loom login (or set LOOM_URL and LOOM_TOKEN)")
    report = store.sync()
    print(f"sent {len(report.sent)}, merged {len(report.merged)}, waiting {report.waiting}")
    if report.failed:
        (thread_id, reason), *_ = report.failed.items()
        raise fail(f"{thread_id} not synced: {reason}", UNREACHABLE)


def _save_and_sync(store: SyncingThreadStore, thread: Thread) -> None:
    if store.sync_client is None:
        store.local.save(thread)
        raise fail("saved on this machine only: run loom login to sync it")
    try:
        store.save_and_sync(thread)
    except LoomError as exc:
        raise fail(exc.reason, UNREACHABLE) from exc


for command in (resume, share, private):
    threads_app.command(command.__name__)(command)
