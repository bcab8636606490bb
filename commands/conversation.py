"""The conversation from the shell: ``loom ingest-transcript`` (``conversation.ingest``) and
``loom op`` (any op, as the operator); ``loom search`` is ``commands.search``."""

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from commands.common import answered, call, check_range, connected
from commands.console import fail, out
from ops.errors import OpError
from ops.limits import parse_body
from ops.schemas import Streamed
from pipelines.transcripts import TranscriptError, default_thread_id, parse_transcript
from workers import broker

RECORDING_OFF = 77  # sysexits' EX_NOPERM: the namespace does not record; a capture script drops the input


def ingest_transcript(
    namespace: Annotated[str, typer.Option(help="the namespace to record into")],
    file: Annotated[
        Path,
        typer.Option(help="Markdown, a JSON array, a Claude Code or Cursor session file, a Cursor export"),
    ],
    thread_id: Annotated[
        str | None, typer.Option(help="a stable thread id (default: derived from the file)")
    ] = None,
    agent: Annotated[str, typer.Option(help="the writing agent's name")] = "default",
    dry_run: Annotated[bool, typer.Option("--dry-run", help="only count the turns")] = False,
    wait: Annotated[bool, typer.Option("--wait", help="wait for the worker to append the turns")] = False,
    timeout: Annotated[int, typer.Option(help="seconds --wait waits at most")] = 120,
    first_line: Annotated[
        int, typer.Option(help="JSON lines sent in pieces: the session file's line this file starts at")
    ] = 1,
) -> None:
    """Hand a transcript file over whole (conversation.ingest, one request): a worker appends its
    turns; ingesting the same file, or a longer version of it, again adds only what is new."""
    check_range("--timeout", timeout, range(1, 121))
    check_range("--first-line", first_line, range(1, 1_000_000_001))
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise fail(f"cannot read {file}: {exc}") from exc
    try:  # the whole file is checked before sending
        turns = parse_transcript(text, source=file.name, first_line=first_line)
    except TranscriptError as exc:
        raise fail(str(exc)) from exc
    if not turns and not thread_id:
        raise fail(f"{file.name}: no turns in it yet, and no --thread-id to file it under")
    thread = thread_id or default_thread_id(file.name, turns)
    if dry_run:
        out.print(f"{len(turns)} turns would be appended to thread {thread}")
        return
    with connected():
        if wait and not broker.workers_seen():
            raise fail(
                "no worker is running to append the turns: "
                "start `loom up` or `loom worker`, or leave out --wait"
            )
        body = {
            "namespace": namespace,
            "agent": agent,
            "thread_id": thread,
            "transcript": text,
            "source": file.name,
            "first_line": first_line,
        }
        answer = call("conversation.ingest", {**body, "wait": wait, "wait_seconds": timeout})
    if answer["reason"] == "logging_disabled":
        raise fail(
            f"namespace {namespace!r} does not record conversations "
            f"(turn it on: loom namespaces logging {namespace} --on)",
            RECORDING_OFF,
        )
    run = answer["run"]
    if answer["reason"] == "duplicate":
        out.print(f"thread {thread}: this file was handed over before (run {run['id']}, {run['status']})")
        return
    if not wait:
        out.print(f"thread {thread}: {len(turns)} turns handed over, run {run['id']} appends them")
        return
    result = run["result"] or {}
    if run["status"] == "succeeded":
        stored, duplicate = result.get("stored", 0), result.get("duplicate", 0)
        out.print(f"thread {thread}: {stored} turns appended, {duplicate} already there")
    elif run["reason"] == "logging_disabled":
        raise fail(
            f"recording was switched off for namespace {namespace!r} after {result.get('stored', 0)} of "
            f"{len(turns)} turns; the rest were not stored (ingest again once it is on)"
        )
    elif run["status"] in ("pending", "running"):
        raise fail(f"run {run['id']} is still {run['status']} after {timeout} s (loom runs show {run['id']})")
    else:
        raise fail(f"run {run['id']} {run['status']}: {run['reason']} {run['last_error'] or ''}".strip())


def call_op(
    name: Annotated[str, typer.Argument(help="the op, e.g. conversation.compact")],
    body: Annotated[str, typer.Argument(help="its JSON body, as POST /v1/<op> takes it")] = "{}",
) -> None:
    """Any op of the HTTP API, as the operator (every namespace, admin); prints the JSON answer.
    E.g. loom op conversation.delete '{"namespace": "ns", "thread_id": "t", "confirm_thread_id": "t"}'."""
    try:
        parsed = parse_body(body.encode())
    except OpError as exc:
        raise fail(exc.reason) from exc
    with connected():
        answer = answered(name, parsed)
        if isinstance(answer, Streamed):  # erasure.export: written as it is read
            for chunk in answer.chunks:
                sys.stdout.buffer.write(chunk)
            sys.stdout.buffer.write(b"\n")
            return
    print(json.dumps(answer, indent=2))
