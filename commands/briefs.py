"""``loom brief``: session briefs saved, read, listed and deleted (``session.brief_*``)."""

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

import services
from commands.common import call, connected
from commands.console import Column, fail, given, out, table
from ops.errors import OpError
from ops.limits import parse_body

brief_app = typer.Typer(no_args_is_help=True, help="Session briefs: save, read, list and delete them.")


def _json_file(path: str, what: str) -> object:
    """A JSON document from a file (``-``: stdin); a clear error for one that is not."""
    try:
        raw = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as exc:
        raise fail(f"cannot read {what} {path}: {exc.strerror}") from exc
    try:
        return parse_body(raw)
    except OpError as exc:
        raise fail(f"{what} {path}: {exc.reason}") from exc


@brief_app.command("save")
def brief_save(
    namespace: Annotated[str, typer.Option(help="the brief's namespace")],
    key: Annotated[str, typer.Option(help="the brief_key (empty: auto/<project>/<branch>)")] = "",
    project: Annotated[str | None, typer.Option()] = None,
    branch: Annotated[str | None, typer.Option()] = None,
    session_id: Annotated[
        str | None, typer.Option(help="the session saving (session/<id> without a key)")
    ] = None,
    events: Annotated[
        str | None, typer.Option(help="a JSON array of events ({kind, text, ...}); - for stdin")
    ] = None,
    sections: Annotated[str | None, typer.Option(help="a JSON object of sections the agent wrote")] = None,
    goal: Annotated[str | None, typer.Option(help="the goal section")] = None,
    status: Annotated[str | None, typer.Option(help="the status section")] = None,
    next_step: Annotated[list[str] | None, typer.Option(help="a next step (repeat it)")] = None,
    event_cursor: Annotated[
        str | None, typer.Option(help="the last event sent: a repeat writes nothing")
    ] = None,
    if_revision: Annotated[int | None, typer.Option(help="save only over this revision")] = None,
    wait_seconds: Annotated[float, typer.Option(help="how long to wait for the windows")] = 30,
    deterministic_fallback: Annotated[
        bool,
        typer.Option(help="with no model to call, condense the events with the deterministic builder"),
    ] = True,
    as_json: Annotated[bool, typer.Option("--json", help="print the JSON answer")] = False,
) -> None:
    """session.brief_save: revise (or start) a brief from events, from sections, or both."""
    written = _json_file(sections, "sections") if sections else {}
    if not isinstance(written, dict):
        raise fail("--sections must hold a JSON object")
    written |= {name: value for name, value in (("goal", goal), ("status", status)) if value is not None}
    if next_step:
        written["next_steps"] = next_step
    body = {
        "namespace": namespace,
        "brief_key": key,
        "project": project,
        "branch": branch,
        "session_id": session_id,
        "events": _json_file(events, "events") if events else [],
        "sections": written or None,
        "event_cursor": event_cursor,
        "if_revision": if_revision,
        "wait_seconds": wait_seconds,
        "deterministic_fallback": deterministic_fallback,
    }
    with connected():
        answer = call("session.brief_save", given(body))
    if as_json:
        print(json.dumps(answer, indent=2))
        return
    windows = answer["windows"]
    said = "revised" if answer["changed"] else f"not changed ({answer['reason']})"
    print(
        f"{answer['brief_key']}: {said}, revision {answer['revision']}"
        + (f", by {answer['author']}" if answer["author"] else "")
        + (f"; windows {windows['revised']}/{windows['total']} revised" if windows["total"] else "")
        + (f", {windows['failed']} failed" if windows["failed"] else "")
        + (f"; runs to wait on: {answer['run_ids']}" if answer["reason"] == "pending" else "")
    )


@brief_app.command("get")
def brief_get(
    namespace: Annotated[str, typer.Option(help="the brief's namespace")],
    key: Annotated[str | None, typer.Option(help="the brief_key")] = None,
    from_session: Annotated[str | None, typer.Option(help="the newest brief this session wrote")] = None,
    project: Annotated[str | None, typer.Option(help="the newest brief of this project")] = None,
    revision: Annotated[int | None, typer.Option(help="an earlier revision")] = None,
    full: Annotated[bool, typer.Option(help="append the client's last compaction summary")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print the JSON answer")] = False,
) -> None:
    """session.brief_get: a brief as Markdown."""
    body = {
        "namespace": namespace,
        "brief_key": key,
        "from_session": from_session,
        "project": project,
        "revision": revision,
        "full": full,
    }
    with services.running(start="database"):
        answer = call("session.brief_get", given(body))
    print(json.dumps(answer, indent=2) if as_json else answer["markdown"])


# A brief's key is read whole; its line (the goal, or what it was about) wraps between words.
BRIEF_COLUMNS = (
    Column("updated", time=True),
    Column("revision", drop=1),
    Column("brief"),
    Column("line", wraps=True),
)


@brief_app.command("list")
def brief_list(
    namespace: Annotated[str, typer.Option(help="the namespace")],
    project: Annotated[str | None, typer.Option(help="only this project's")] = None,
    limit: Annotated[int, typer.Option(help="at most this many (1-200)")] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="print the JSON answer")] = False,
) -> None:
    """session.brief_list: the namespace's briefs, newest first, one line each."""
    body = {"namespace": namespace, "project": project, "limit": limit}
    with services.running(start="database"):
        answer = call("session.brief_list", given(body))
    if as_json:
        for brief in answer["briefs"]:
            print(json.dumps(brief))
        return
    rows = [(b["updated_at"], b["revision"], b["brief_key"], b["line"]) for b in answer["briefs"]]
    out.print(table(BRIEF_COLUMNS, rows))


@brief_app.command("delete")
def brief_delete(
    namespace: Annotated[str, typer.Option(help="the brief's namespace")],
    key: Annotated[str, typer.Option(help="the brief_key")],
) -> None:
    """session.brief_delete: forget a brief and its revisions."""
    with services.running(start="database"):
        answer = call("session.brief_delete", {"namespace": namespace, "brief_key": key})
    print(f"{key}: {'deleted' if answer['deleted'] else 'no such brief'}")
