"""The periodic passes by hand: ``loom passes`` (list them, fire one), and the two passes an
operator fires with a narrower scope, ``loom screening rescreen`` and ``loom night-weave``."""

import dataclasses
import json
import uuid
from collections import Counter
from typing import Annotated

import typer

import services
from commands import progress
from commands.common import call, check_choice, check_range, connected
from commands.console import Column, fail, out, say, table
from models.stage_run import PENDING, RUNNING, StageRun
from ops.waiting import Watch
from schedules.night_weaving import weave_night
from schedules.record import PassBusy, fire
from schedules.registry import Pass, passes
from schedules.screening import rescreen_outdated
from workers import ledger

passes_app = typer.Typer(no_args_is_help=True, help="The periodic passes: list them, run one by hand.")
screening_app = typer.Typer(no_args_is_help=True, help="Screening: apply new rules to stored turns.")
night_app = typer.Typer(
    invoke_without_command=True,
    help="Night weaving: consolidate the LoomSessions awaiting the night now, or list the weavings.",
)


# On a narrow terminal a listing keeps what answers "did it run, and well": the columns with a
# ``drop`` go, the lowest first (``commands.console.table``).
PASS_COLUMNS = (
    Column("pass"),
    Column("trigger", drop=5),
    Column("next", time=True, none="-", drop=1),
    Column("last started", time=True, none="never"),
    Column("finished", time=True, drop=2),
    Column("sent", drop=4),
    Column("by", drop=3),
    Column("error", wraps=True, none=""),
)
NIGHT_COLUMNS = (
    Column("id"),
    Column("loom", drop=1),
    Column("started", time=True),
    Column("finished", time=True, drop=2),
    Column("sessions", drop=5),
    Column("consolidated"),
    Column("episodes"),
    Column("judged", drop=3),
    Column("by", drop=4),
)


@passes_app.command("list")
def passes_list(
    as_json: Annotated[bool, typer.Option("--json", help="one JSON object a line")] = False,
) -> None:
    """Each pass: its trigger and its last firing (by the scheduler or by hand)."""
    with services.running(start="database"):
        listed = call("passes.list", {})["passes"]
    if as_json:
        for p in listed:
            say(json.dumps(p))
        return
    rows = (
        (
            p["name"],
            p["trigger"],
            p["next_at"],
            p["started_at"],
            p["finished_at"],
            p["sent"],
            p["by"],
            p["error"],
        )
        for p in listed
    )
    out.print(table(PASS_COLUMNS, rows))


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


def _fire(chosen: Pass, wait: bool, timeout: int) -> list[StageRun]:
    """Fire a pass as the operator, and with ``wait`` wait for the runs it sent (answered)."""
    try:
        sent = fire(chosen, by="operator")
    except PassBusy:
        raise fail(f"the {chosen.name} pass is running now; try again when it has finished") from None
    out.print(f"{chosen.name}: sent {len(sent)} runs")
    if not wait or not sent:
        return []
    runs = progress.block(lambda final: _settled(sent, final), timeout, chosen.name)
    if any(r.status in (PENDING, RUNNING) for r in runs):
        raise fail(f"{chosen.name}: runs still pending after {timeout} s")
    counts = Counter(r.status for r in runs)
    out.print(", ".join(f"{n} {status}" for status, n in sorted(counts.items())))
    return runs


def _settled(run_ids: list[int], final: bool) -> list[StageRun] | Watch:
    """The runs once none is pending or running (``final``: as they are), else all of them watched."""
    runs = ledger.runs_by_id(run_ids)
    if final or not any(r.status in (PENDING, RUNNING) for r in runs):
        return runs
    return Watch(frozenset(run_ids))


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
        runs = _fire(
            dataclasses.replace(scheduled, run=lambda: weave_night(loom_id, by="operator")), wait, timeout
        )
    ended = [change for r in runs for change in (r.result or {}).get("superseded", [])]
    for change in ended:  # the night's act on tensions: an older thread a newer one superseded
        say(f"superseded {change['thread']} by {change['by']} (until {change['until']})")


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
            say(json.dumps(w))
        return
    rows = (
        (
            w["id"],
            w["loom_id"] or "all",
            w["started_at"],
            w["finished_at"],
            w["sessions"],
            w["consolidated"],
            w["episodes"],
            w["judged"],
            w["by"],
        )
        for w in weavings
    )
    out.print(table(NIGHT_COLUMNS, rows))
