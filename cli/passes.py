"""The periodic passes by hand: ``loom passes`` (list them, fire one), and the two passes an
operator fires with a narrower scope, ``loom screening rescreen`` and ``loom night-weave``."""

import dataclasses
import json
import time
import uuid
from collections import Counter
from typing import Annotated

import typer
from rich import box
from rich.table import Table

import services
from cli.common import call, check_choice, check_range, connected, when
from cli.console import fail, out
from models.stage_run import PENDING, RUNNING
from schedules.night_weaving import weave_night
from schedules.record import PassBusy, fire
from schedules.registry import Pass, passes
from schedules.rescreen import rescreen_outdated
from workers import ledger

passes_app = typer.Typer(no_args_is_help=True, help="The periodic passes: list them, run one by hand.")
screening_app = typer.Typer(no_args_is_help=True, help="Screening: apply new rules to stored turns.")
night_app = typer.Typer(
    invoke_without_command=True,
    help="Night weaving: consolidate the LoomSessions awaiting the night now, or list the weavings.",
)


@passes_app.command("list")
def passes_list() -> None:
    """Each pass: its trigger and its last firing (by the scheduler or by hand)."""
    with services.running(start="database"):
        listed = call("passes.list", {})["passes"]
    table = Table("pass", "trigger", "last started", "finished", "sent", "by", "error", box=box.SIMPLE)
    for p in listed:
        table.add_row(
            p["name"],
            p["trigger"],
            when(p["started_at"]) if p["started_at"] else "never",
            when(p["finished_at"]),
            str(p["sent"]) if p["sent"] is not None else "-",
            p["by"] or "-",
            p["error"] or "",
        )
    out.print(table)


@passes_app.command("run")
def passes_run(
    name: str,
    wait: Annotated[bool, typer.Option(help="wait for the runs the pass sent to finish")] = False,
    timeout: Annotated[int, typer.Option(help="seconds --wait waits at most")] = 300,
) -> None:
    """Fire one pass now: it enqueues exactly what it would on its schedule."""
    check_range("--timeout", timeout, range(1, 86_401))
    with connected():
        known = passes()
        check_choice("the pass", name, tuple(known))
        _fire(known[name], wait, timeout)


@screening_app.command("rescreen")
def screening_rescreen(
    namespace: Annotated[str | None, typer.Option(help="only turns of this namespace")] = None,
    wait: Annotated[bool, typer.Option(help="wait for the runs to finish")] = False,
    timeout: Annotated[int, typer.Option(help="seconds --wait waits at most")] = 300,
) -> None:
    """Judge again, with this build's rules, the turns older screening rules judged (the rescreen
    pass, by hand; at most LOOM_RESCREEN_MAX_RUNS runs of LOOM_RESCREEN_BATCH turns a firing)."""
    check_range("--timeout", timeout, range(1, 86_401))
    with connected():
        scheduled = passes()["rescreen"]
        _fire(dataclasses.replace(scheduled, run=lambda: rescreen_outdated(namespace)), wait, timeout)


def _fire(chosen: Pass, wait: bool, timeout: int) -> None:
    """Fire a pass as the operator, and with ``wait`` wait for the runs it sent."""
    try:
        sent = fire(chosen, by="operator")
    except PassBusy:
        raise fail(f"the {chosen.name} pass is running now; try again when it has finished") from None
    out.print(f"{chosen.name}: sent {len(sent)} runs")
    if not wait or not sent:
        return
    deadline = time.monotonic() + timeout
    while (runs := ledger.runs_by_id(sent)) and any(r.status in (PENDING, RUNNING) for r in runs):
        if time.monotonic() > deadline:
            raise fail(f"{chosen.name}: runs still pending after {timeout} s")
        time.sleep(0.5)
    counts = Counter(r.status for r in runs)
    out.print(", ".join(f"{n} {status}" for status, n in sorted(counts.items())))


@night_app.callback()
def night_weave(
    ctx: typer.Context,
    loom: Annotated[str | None, typer.Option(help="only this loom's sessions (its id)")] = None,
    wait: Annotated[bool, typer.Option(help="wait for the sessions to be consolidated")] = False,
    timeout: Annotated[int, typer.Option(help="seconds --wait waits at most")] = 3600,
) -> None:
    """Weave the night now, as the nightly pass does: a run for each session awaiting the night
    (for system cron, or an operator). `loom night-weave list` shows the weavings."""
    if ctx.invoked_subcommand is not None:
        return
    check_range("--timeout", timeout, range(1, 86_401))
    try:
        loom_id = uuid.UUID(loom) if loom is not None else None
    except ValueError as exc:
        raise fail(f"--loom: {loom!r} is not a loom id (a uuid; `loom op looms.list` shows them)") from exc
    with connected():
        scheduled = passes()["night_weaving"]
        _fire(dataclasses.replace(scheduled, run=lambda: weave_night(loom_id, by="operator")), wait, timeout)


@night_app.command("list")
def night_weave_list(
    limit: Annotated[int, typer.Option(help="the newest weavings shown")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="one JSON object a line")] = False,
) -> None:
    """The night weavings, newest first: when, by whom, the sessions sent and consolidated, the
    episodes woven and the threads judged."""
    check_range("--limit", limit, range(1, 100_001))
    with services.running(start="database"):
        weavings = call("night_weaving.list", {"limit": limit})["nights"]
    if as_json:
        for w in weavings:
            out.print(json.dumps(w), markup=False, highlight=False, soft_wrap=True)
        return
    columns = ("id", "loom", "started", "finished", "sessions", "consolidated", "episodes", "judged", "by")
    table = Table(*columns, box=box.SIMPLE)
    for w in weavings:
        table.add_row(
            w["id"],
            w["loom_id"] or "all",
            when(w["started_at"]),
            when(w["finished_at"]),
            str(w["sessions"]),
            str(w["consolidated"]),
            str(w["episodes"]),
            str(w["judged"]),
            w["by"],
        )
    out.print(table)
