"""``loom status``: the servers, the stages' runs and queues, the embedder's rate, at a glance
(``ops.status``). Starts nothing."""

import dataclasses
import json
from typing import Annotated

import typer
from rich.text import Text

import services
from commands.console import Column, err, out, say, table
from models.settings import get_settings
from ops import status as system

# The stages' table, narrowed on a small terminal: the queue's rarer states go first.
STAGE_COLUMNS = (
    Column("stage"),
    Column("pending"),
    Column("running", drop=4),
    Column("failed"),
    Column("oldest pending", drop=5),
    Column("queued", drop=3),
    Column("delayed", drop=1),
    Column("dead", drop=2),
)


def status(
    as_json: Annotated[bool, typer.Option("--json", help="the whole snapshot as one JSON object")] = False,
) -> None:
    """Services, queues, failed runs and the oldest pending run at a glance. Starts nothing: a
    server that is not running is reported down, and the exit code is then 1. Where there is no
    data directory (and no configured servers) it says so in one line, exit 2, and makes none."""
    get_settings.cache_clear()  # the environment as it is now
    settings = get_settings()
    # An existing home that was never initialized is reported down like a stopped one; only a
    # missing home is refused, since reading it would make it.
    if not settings.home.exists() and (missing := services.no_data_directory(settings, start=None)):
        say(f"error: {missing}", to=err)
        raise typer.Exit(2)
    at = system.endpoints()
    probe = system.Probe(at)
    try:
        snap = probe.snapshot()
    finally:
        probe.close()
    api_check = system.probe_api(settings.local_api_url)
    services_checked = (
        ("database", snap.database, services.masked(at.database_url)),
        ("broker", snap.broker, services.masked(at.redis_url)),
        ("api", api_check, settings.local_api_url),
    )
    if as_json:
        print(
            json.dumps(
                {
                    "services": {
                        name: {"up": check.ok, "at": where, "error": check.error}
                        for name, check, where in services_checked
                    },
                    "stages": {stage: dataclasses.asdict(state) for stage, state in snap.stages.items()},
                    "embedded_per_second": snap.embedded_per_second,
                    "errors": snap.errors,
                }
            )
        )
    else:
        _print(snap, services_checked)
    raise typer.Exit(0 if snap.up and api_check.ok else 1)


def _print(snap: system.Snapshot, services_checked: tuple[tuple[str, system.Check, str], ...]) -> None:
    for name, check, where in services_checked:
        shown = ("up   ", "green") if check.ok else ("down ", "bold red")
        line = Text.assemble(f"{name:<9}", shown, f" {where}", f"  {check.error}" if check.error else "")
        out.print(line, soft_wrap=True, highlight=False)
    if all(state.runs is None and state.queued is None for state in snap.stages.values()):
        say("stages: unknown while the database and the broker are down")
        return
    rows = []
    for stage, state in snap.stages.items():
        runs, queued = state.runs or {}, state.queued or {}
        rows.append(
            (
                stage,
                *(runs.get(s, "?") for s in ("pending", "running", "failed")),
                _age(state.oldest_pending_seconds),
                *(queued.get(s, "?") for s in ("ready", "delayed", "dead")),
            )
        )
    out.print(table(STAGE_COLUMNS, rows))
    rates = snap.embedded_per_second
    out.print(
        f"embedder: {rates['1m']:.2f} turns/s over the last minute, {rates['5m']:.2f} over 5 minutes"
        if rates is not None
        else "embedder: unknown while the database is down",
        highlight=False,
    )
    for error in snap.errors:
        say(f"warning: {error}", to=err)


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    if not seconds:
        return "-"
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes:02d}m"
    return f"{minutes}m {secs:02d}s" if minutes else f"{secs}s"
