"""``loom erasure``: the erasure log (``erasure.list``) and a person's export
(``erasure.export``); an erasure itself is asked for with ``loom op erasure.request BODY``."""

import json
import sys
from typing import Annotated

import typer

import services
from commands.common import call, check_range, streamed
from commands.console import Column, out, say, table

erasure_app = typer.Typer(no_args_is_help=True, help="Erasure: the log of requests, and a person's export.")

# On a narrow terminal the event's own id goes first, then who asked (`--json` has them).
EVENT_COLUMNS = (
    Column("id", drop=1),
    Column("erasure"),
    Column("event"),
    Column("at", time=True),
    Column("by", drop=2),
    Column("scope", wraps=True),
    Column("rows", wraps=True),
)


@erasure_app.command("list")
def erasure_list(
    limit: Annotated[int, typer.Option(help="the newest events shown")] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="one JSON object a line")] = False,
) -> None:
    """The erasure log, newest first: who asked, when, what scope, how many rows (requests, their
    finishing, exports). Ask for one with `loom op erasure.request BODY`."""
    check_range("--limit", limit, range(1, 100_001))
    with services.running(start="database"):
        events = call("erasure.list", {"limit": limit})["events"]
    if as_json:
        for e in events:
            say(json.dumps(e))
        return
    rows = (
        (
            e["id"],
            e["erasure_id"],
            e["event"],
            e["at"],
            e["actor"],
            json.dumps(e["scope"]),
            json.dumps(e["rows"]) if e["rows"] is not None else None,
        )
        for e in events
    )
    out.print(table(EVENT_COLUMNS, rows))


@erasure_app.command("export")
def erasure_export(
    namespace: Annotated[str, typer.Option(help="the person's namespace")],
    user_id: Annotated[str, typer.Option(help="the person")],
    tombstoned: Annotated[bool, typer.Option(help="include tombstoned turns")] = True,
) -> None:
    """A person's turns as one JSON document on stdout, written while it is read (erasure.export)."""
    with services.running(start="database"):
        body = {"namespace": namespace, "user_id": user_id, "include_tombstoned": tombstoned}
        for chunk in streamed("erasure.export", body).chunks:
            sys.stdout.buffer.write(chunk)
        sys.stdout.buffer.write(b"\n")
