"""``loom runs``: the stage ledger listed and shown (``runs.list``, ``runs.get``: on the database
alone), and failed runs queued again (``runs.retry``, ``runs.retry_stage``: the running system)."""

import json
import re
from datetime import UTC, datetime, timedelta
from typing import Annotated

import typer

import services
from commands.common import call, check_choice, check_range, connected
from commands.console import Column, fail, given, out, say, table, when
from models.stage_run import DONE, FAILED, SKIPPED, STATUSES
from ops.runs import PAGE_MAX
from workers import stages

runs_app = typer.Typer(no_args_is_help=True, help="The stage ledger: list, show and retry stage runs.")

RUN_IDS = range(1, 2**63)  # a run id is a bigint

# On a narrow terminal the attempts go first, then the subject (`loom runs show` has it all).
RUN_COLUMNS = (
    Column("id"),
    Column("stage"),
    Column("subject", wraps=True, drop=2),
    Column("status"),
    Column("attempts", drop=1),
    Column("updated", time=True, drop=3),
    Column("reason / last error", wraps=True, none=""),
)


def _since(value: str | None) -> datetime | None:
    if value is None:
        return None
    match = re.fullmatch(r"(\d+)([smhd])", value)
    if match:
        unit = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}[match.group(2)]
        return datetime.now(UTC) - timedelta(**{unit: int(match.group(1))})
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise fail(f"--since {value!r} is neither a duration like 30m/2h/7d nor an ISO time") from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _listed(status: str | None, stage: str | None, since: datetime | None, limit: int) -> list[dict]:
    """Up to ``limit`` runs, newest first, paged through ``runs.list`` (a page holds at most
    ``PAGE_MAX``)."""
    found: list[dict] = []
    before: int | None = None
    while len(found) < limit:
        asked = min(PAGE_MAX, limit - len(found))
        body = {"status": status, "stage": stage, "since": since and since.isoformat(), "before_id": before}
        page = call("runs.list", given(body | {"limit": asked}))["runs"]
        found += page
        if len(page) < asked:
            break
        before = page[-1]["id"]
    return found


@runs_app.command("list")
def runs_list(
    status: Annotated[str | None, typer.Option(help="pending|running|succeeded|skipped|failed")] = None,
    stage: Annotated[str | None, typer.Option(help="e.g. embedding")] = None,
    since: Annotated[str | None, typer.Option(help="30m, 2h, 7d or an ISO time")] = None,
    failed: Annotated[bool, typer.Option("--failed", help="same as --status failed")] = False,
    limit: int = 100,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """List stage runs, newest first."""
    status = FAILED if failed else status
    check_choice("--status", status, STATUSES)
    check_range("--limit", limit, range(1, 10_001))
    created_since = _since(since)
    with services.running(start=services.DATABASE):
        runs = _listed(status, stage, created_since, limit)
    if as_json:
        print(json.dumps(runs))
        return
    rows = (
        (
            run["id"],
            run["stage"],
            run["subject"],
            run["status"],
            run["attempts"],
            run["updated_at"],
            (run["reason"] or (run["last_error"] if run["status"] not in DONE else None) or "")[:80],
        )
        for run in runs
    )
    out.print(table(RUN_COLUMNS, rows))


@runs_app.command("show")
def runs_show(
    run_id: int,
    as_json: Annotated[bool, typer.Option("--json", help="the run whole, history included")] = False,
) -> None:
    """One stage run: where it stands now, then each failed attempt, oldest first."""
    check_range("the run id", run_id, RUN_IDS)
    with services.running(start=services.DATABASE):
        run = call("runs.get", {"run_id": run_id})["run"]
    if as_json:
        print(json.dumps(run, indent=2))
        return
    state = run["status"] + (f" ({run['reason']})" if run["reason"] else "")
    attempts = run["attempts"]
    lines = [
        f"run {run['id']}  {run['stage']}  {run['subject']}",
        f"status    {state}, after {attempts} attempt{'s' if attempts != 1 else ''}",
        f"created   {when(run['created_at'])}",
        f"finished  {when(run['finished_at'])}",
    ]
    if run["result"]:
        lines.append(f"result    {json.dumps(run['result'])}")
    if run["history"]:
        lines.append("failed attempts:")
        lines += [f"  {a['attempt']:>3}  {when(a['at'])}  {a['error']}" for a in run["history"]]
    say("\n".join(lines))


@runs_app.command("retry")
def runs_retry(
    run_id: Annotated[int | None, typer.Argument(help="one run to retry")] = None,
    stage: Annotated[str | None, typer.Option(help="retry every run of this stage…")] = None,
    status: Annotated[str | None, typer.Option(help="…with this status (failed or skipped)")] = None,
) -> None:
    """Queue failed (or skipped) runs again. A run that succeeded is left alone."""
    if (run_id is None) == (stage is None):
        raise fail("give either a run id or --stage with --status")
    check_range("the run id", run_id, RUN_IDS)
    check_choice("--status", status, (FAILED, SKIPPED))
    with connected():
        if run_id is not None:
            answer = call("runs.retry", {"run_id": run_id})
        else:
            check_choice("--stage", stage, tuple(sorted(stages.all_stages())))
            answer = call("runs.retry_stage", given({"stage": stage, "status": status}))
        out.print(answer["message"])
