"""``loom status``: the servers, the stages' runs and queues, the embedder's rate, at a glance
(``ops.status``). Starts nothing."""

import typer
from rich import box
from rich.table import Table
from rich.text import Text

import services
from cli.console import err, out
from models.settings import get_settings
from ops import status as system


def status() -> None:
    """Services, queues, failed runs and the oldest pending run at a glance. Starts nothing: a
    server that is not running is reported down, and the exit code is then 1."""
    get_settings.cache_clear()  # the environment as it is now
    settings = get_settings()
    at = system.endpoints()
    probe = system.Probe(at)
    try:
        snap = probe.snapshot()
    finally:
        probe.close()
    api_check = system.probe_api(settings.host, settings.port)
    for name, check, where in (
        ("database", snap.database, services.masked(at.database_url)),
        ("broker", snap.broker, services.masked(at.redis_url)),
        ("api", api_check, f"http://{settings.host}:{settings.port}"),
    ):
        state = ("up   ", "green") if check.ok else ("down ", "bold red")
        line = Text.assemble(f"{name:<9}", state, f" {where}", f"  {check.error}" if check.error else "")
        out.print(line, soft_wrap=True, highlight=False)
    table = Table(
        "stage", "pending", "running", "failed", "oldest pending", "queued", "delayed", "dead", box=box.SIMPLE
    )
    for stage, state in snap.stages.items():
        runs, queued = state.runs or {}, state.queued or {}
        table.add_row(
            stage,
            *(str(runs.get(s, "?")) for s in ("pending", "running", "failed")),
            _age(state.oldest_pending_seconds),
            *(str(queued.get(s, "?")) for s in ("ready", "delayed", "dead")),
        )
    out.print(table)
    rates = snap.embedded_per_second
    out.print(
        f"embedder: {rates['1m']:.2f} turns/s over the last minute, {rates['5m']:.2f} over 5 minutes"
        if rates is not None
        else "embedder: unknown while the database is down",
        highlight=False,
    )
    for error in snap.errors:
        err.print(f"warning: {error}", markup=False, highlight=False)
    raise typer.Exit(0 if snap.up and api_check.ok else 1)


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
