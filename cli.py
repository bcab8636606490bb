"""The ``loom`` command: processes (up, api, worker, scheduler) and operator ops. Thin: each
command reaches the servers (``services.running``) and calls into ops/, workers/ or schedules/.
Modules that read the broker or database settings are imported inside the commands, after the
servers are known."""

import contextlib
import dataclasses
import json
import logging
import os
import re
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

import cli_threads
import services

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Loom: conversation memory for AI agents.")
tokens_app = typer.Typer(no_args_is_help=True, help="Bearer tokens.")
runs_app = typer.Typer(no_args_is_help=True, help="The stage ledger: list, show and retry stage runs.")
db_app = typer.Typer(no_args_is_help=True, help="Schema migrations.")
namespaces_app = typer.Typer(no_args_is_help=True, help="Namespaces and their recording switch.")
passes_app = typer.Typer(no_args_is_help=True, help="The periodic passes: list them, run one by hand.")
screening_app = typer.Typer(no_args_is_help=True, help="Screening: apply new rules to stored turns.")
erasure_app = typer.Typer(no_args_is_help=True, help="Erasure: the log of requests, and a person's export.")
night_app = typer.Typer(
    invoke_without_command=True,
    help="Night weaving: consolidate the LoomSessions awaiting the night now, or list the weavings.",
)
app.add_typer(tokens_app, name="tokens")
app.add_typer(runs_app, name="runs")
app.add_typer(db_app, name="db")
app.add_typer(namespaces_app, name="namespaces")
app.add_typer(passes_app, name="passes")
app.add_typer(screening_app, name="screening")
app.add_typer(erasure_app, name="erasure")
app.add_typer(night_app, name="night-weave")
brief_app = typer.Typer(no_args_is_help=True, help="Session briefs: save, read, list and delete them.")
app.add_typer(brief_app, name="brief")
cli_threads.register(app)  # loom threads …, loom login, loom resume / share / private

out = Console()
err = Console(stderr=True)


def _logging() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")


RECORDING_OFF = 77  # sysexits' EX_NOPERM: the namespace does not record; a capture script drops the input


def fail(message: str, code: int = 2) -> typer.Exit:
    """One line saying what is wrong, and a non-zero exit (2 unless said otherwise)."""
    err.print(f"error: {message}", markup=False, highlight=False, soft_wrap=True)  # one line, however long
    return typer.Exit(code)


def _given(body: dict) -> dict:
    """A body without the options left unset (the op's defaults apply)."""
    return {name: value for name, value in body.items() if value is not None}


def _call(op: str, body: dict) -> dict:
    from ops.caller import OPERATOR
    from ops.errors import OpError
    from ops.registry import call

    try:
        return call(op, OPERATOR, body)
    except OpError as exc:
        raise fail(exc.reason) from exc


@contextlib.contextmanager
def _connected() -> Iterator[services.Endpoints]:
    """The running system, for a command that needs it all: the servers answer (else one line,
    exit 75) and this process's broker is set up on their Redis."""
    with services.running(start=None) as endpoints:
        from workers import broker

        broker.setup(endpoints.redis_url)
        yield endpoints


# --- processes -----------------------------------------------------------------------------------


def _check_vector_width() -> None:
    """One vector column holds one width: a configured model of another width is refused at start
    (Loom does not migrate the column), before it could fail every embedding and every search.
    Every host must be configured with the same embedder (``LOOM_EMBED_*``)."""
    from models import db
    from providers.embedders import configured_dimensions, configured_model

    width, wanted = db.vector_width(), configured_dimensions()
    if width and width != wanted:
        raise fail(
            f"the embeddings column holds {width}-dimension vectors but {configured_model()} gives "
            f"{wanted}: use a new database for this model, or a model that gives {width} "
            f"(LOOM_EMBED_DIMENSIONS={width} where the endpoint can shorten its vectors)"
        )


@app.command()
def up() -> None:
    """Run Loom on one machine: embedded PostgreSQL and Redis, then the API, a worker, the scheduler."""
    from models.settings import get_settings
    from services.supervisor import Supervisor

    _logging()
    with services.running(start=services.ALL) as endpoints:
        _check_vector_width()
        settings = get_settings()
        out.print(f"Loom data in {settings.home}")
        out.print(f"PostgreSQL {services.masked(endpoints.database_url)}\nRedis      {endpoints.redis_url}")
        out.print(f"API on http://{settings.host}:{settings.port}  (GET /healthz, POST /v1/<op>)")
        out.print(f"Dashboard on http://{settings.host}:{settings.port}/ui  (sign in with a token)")
        out.print("Get a token: loom tokens create --namespace NS --role writer")
        code = Supervisor(settings.home / "run", services.embedded_in_use()).run()
    raise typer.Exit(code)


@app.command()
def api() -> None:
    """The HTTP API."""
    import uvicorn

    _logging()
    with _connected():
        _check_vector_width()
        from api.app import create_app
        from models.settings import get_settings

        settings = get_settings()
        uvicorn.run(
            create_app(),
            host=settings.host,
            port=settings.port,
            log_level="info",
            access_log=settings.api_access_log,
        )


@app.command()
def worker(threads: Annotated[int | None, typer.Option(help="worker threads")] = None) -> None:
    """A Dramatiq worker running the stages (start as many hosts as the load needs)."""
    _check_range("--threads", threads, range(1, 257))
    _logging()
    with _connected():
        _check_vector_width()
        from models.settings import get_settings
        from workers.runner import run

        run(threads or get_settings().worker_threads)


@app.command()
def scheduler() -> None:
    """The periodic passes (they only enqueue)."""
    _logging()
    with _connected():
        _check_vector_width()  # its re-embedding pass compares stored vectors with this model
        from schedules.runner import run

        run()


@db_app.command("upgrade")
def db_upgrade() -> None:
    """Apply the migrations to the configured database."""
    from models import migrate

    with services.running(start=services.DATABASE) as endpoints:
        migrate.upgrade(endpoints.database_url)
    out.print("database at the newest schema")


@db_app.command("revision")
def db_revision(
    message: Annotated[str, typer.Option("-m", "--message", help="what the migration does")],
) -> None:
    """Autogenerate a migration from the tables (review what it writes before committing it)."""
    from models import migrate

    with services.running(start=services.DATABASE) as endpoints:
        migrate.revision(endpoints.database_url, message)


# --- tokens and namespaces -----------------------------------------------------------------------


@tokens_app.command("create")
def tokens_create(
    namespace: Annotated[
        list[str] | None, typer.Option("--namespace", help="a namespace the token covers; repeat")
    ] = None,
    role: Annotated[str, typer.Option(help="viewer | writer | admin")] = "writer",
    read_scope: Annotated[
        str,
        typer.Option(help="namespace (a service token) | own_user (an end user's) | own_session"),
    ] = "namespace",
    read_user_id: Annotated[
        str | None,
        typer.Option(help="own_user: the one user the token acts as (else each request names one)"),
    ] = None,
    read_session_id: Annotated[
        str | None, typer.Option(help="own_session: the session it is pinned to")
    ] = None,
    user_id: Annotated[
        str | None,
        typer.Option(
            help="the user the token speaks for: it owns the coding-session threads the token writes "
            "(bounds no read; without it a namespace-wide token owns as the namespace)"
        ),
    ] = None,
    all_namespaces: Annotated[
        bool,
        typer.Option(
            "--all-namespaces",
            help="every namespace, present and future: the operator's token (operator ops, dashboard)",
        ),
    ] = False,
) -> None:
    """Mint a bearer token; prints only the token."""
    with services.running(start=services.DATABASE):
        from ops.caller import create_token
        from ops.errors import OpError

        try:
            token = create_token(
                namespace or [], role, read_scope, read_user_id, read_session_id, user_id, all_namespaces
            )
        except OpError as exc:
            raise fail(exc.reason) from exc
    print(token)


@tokens_app.command("list")
def tokens_list(
    as_json: Annotated[bool, typer.Option("--json", help="one JSON object per line")] = False,
) -> None:
    """Every token minted, revoked ones too (never the token itself: only its hash is kept)."""
    with services.running(start=services.DATABASE):
        from ops.caller import list_tokens

        tokens = list_tokens()
    rows = [
        {
            "id": t.id,
            "role": t.role,
            "namespaces": t.namespaces,
            "all_namespaces": t.all_namespaces,
            "read_scope": t.read_scope,
            "read_user_id": t.read_user_id,
            "read_session_id": t.read_session_id,
            "user_id": t.user_id,
            "created_at": t.created_at.isoformat(),
            "revoked_at": t.revoked_at.isoformat() if t.revoked_at else None,
        }
        for t in tokens
    ]
    if as_json:
        for row in rows:
            print(json.dumps(row))
        return
    table = Table("id", "role", "namespaces", "read scope", "pinned to", "user", "created", "revoked")
    for row in rows:
        pinned = row["read_user_id"] or row["read_session_id"] or ""
        table.add_row(
            str(row["id"]),
            row["role"],
            "(all)" if row["all_namespaces"] else ", ".join(row["namespaces"]),
            row["read_scope"],
            pinned,
            row["user_id"] or "",
            row["created_at"][:19],
            (row["revoked_at"] or "")[:19],
        )
    out.print(table)


@tokens_app.command("revoke")
def tokens_revoke(token_id: Annotated[int, typer.Argument(help="the id `loom tokens list` shows")]) -> None:
    """Revoke a token: it is refused (401) within the grant cache's lifetime (10 s)."""
    with services.running(start=services.DATABASE):
        from ops.caller import revoke_token

        if not revoke_token(token_id):
            raise fail(f"no live token with id {token_id}")
    print(f"revoked token {token_id}")


@namespaces_app.command("logging")
def namespaces_logging(
    namespace: str, enabled: Annotated[bool, typer.Option("--on/--off", help="record conversations")]
) -> None:
    """Switch conversation recording for a namespace (off by default)."""
    with services.running(start=services.DATABASE):
        answer = _call("conversation.set_logging", {"namespace": namespace, "enabled": enabled})
    out.print(
        f"{namespace}: conversation logging {'on' if answer['conversation_logging_enabled'] else 'off'}"
    )


# --- operator ops --------------------------------------------------------------------------------


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


def _check_choice(name: str, value: str | None, choices: tuple[str, ...]) -> None:
    if value is not None and value not in choices:
        raise fail(f"{name} must be one of {', '.join(choices)}")


RUN_IDS = range(1, 2**63)  # a run id is a bigint


def _check_range(name: str, value: int | None, allowed: range) -> None:
    if value is not None and value not in allowed:
        raise fail(f"{name} must be between {allowed.start} and {allowed.stop - 1}")


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
    from models.stage_run import FAILED, STATUSES

    status = FAILED if failed else status
    _check_choice("--status", status, STATUSES)
    _check_range("--limit", limit, range(1, 10_001))
    with services.running(start=services.DATABASE):
        from workers import ledger

        runs = ledger.select_runs(status, stage, _since(since), limit)
    if as_json:
        print(json.dumps([run.model_dump(mode="json") for run in runs]))
        return
    table = Table("id", "stage", "subject", "status", "attempts", "updated", "reason / last error")
    for run in runs:
        table.add_row(
            str(run.id),
            run.stage,
            run.subject,
            run.status,
            str(run.attempts),
            run.updated_at.strftime("%Y-%m-%d %H:%M:%S"),
            (run.reason or run.last_error or "")[:80],
        )
    out.print(table)


@runs_app.command("show")
def runs_show(run_id: int) -> None:
    """One stage run, whole."""
    _check_range("the run id", run_id, RUN_IDS)
    with services.running(start=services.DATABASE):
        from workers import ledger

        run = ledger.get(run_id)
    if run is None:
        raise fail(f"no stage run {run_id}")
    print(json.dumps(run.model_dump(mode="json"), indent=2))


@runs_app.command("retry")
def runs_retry(
    run_id: Annotated[int | None, typer.Argument(help="one run to retry")] = None,
    stage: Annotated[str | None, typer.Option(help="retry every run of this stage…")] = None,
    status: Annotated[str | None, typer.Option(help="…with this status (failed or skipped)")] = None,
) -> None:
    """Queue failed (or skipped) runs again. A run that succeeded is left alone."""
    from models.stage_run import FAILED, SKIPPED

    if (run_id is None) == (stage is None):
        raise fail("give either a run id or --stage with --status")
    _check_range("the run id", run_id, RUN_IDS)
    _check_choice("--status", status, (FAILED, SKIPPED))
    with _connected():
        from workers import stages

        if run_id is not None:
            answer = _call("runs.retry", {"run_id": run_id})
        else:
            _check_choice("--stage", stage, tuple(sorted(stages.all_stages())))
            answer = _call("runs.retry_stage", _given({"stage": stage, "status": status}))
        out.print(answer["message"])


@passes_app.command("list")
def passes_list() -> None:
    """Each pass: its trigger and its last firing (by the scheduler or by hand)."""
    with services.running(start="database"):
        listed = _call("passes.list", {})["passes"]
    from rich import box

    table = Table("pass", "trigger", "last started", "finished", "sent", "by", "error", box=box.SIMPLE)
    for p in listed:
        table.add_row(
            p["name"],
            p["trigger"],
            _when(p["started_at"]) if p["started_at"] else "never",
            _when(p["finished_at"]),
            str(p["sent"]) if p["sent"] is not None else "-",
            p["by"] or "-",
            p["error"] or "",
        )
    out.print(table)


def _when(moment: datetime | str | None) -> str:
    """A time (or an op's ISO time), to the second."""
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment)
    return moment.isoformat(timespec="seconds") if moment else "-"


@passes_app.command("run")
def passes_run(
    name: str,
    wait: Annotated[bool, typer.Option(help="wait for the runs the pass sent to finish")] = False,
    timeout: Annotated[int, typer.Option(help="seconds --wait waits at most")] = 300,
) -> None:
    """Fire one pass now: it enqueues exactly what it would on its schedule."""
    _check_range("--timeout", timeout, range(1, 86_401))
    with _connected():
        from schedules.registry import passes

        known = passes()
        _check_choice("the pass", name, tuple(known))
        _fire(known[name], wait, timeout)


@screening_app.command("rescreen")
def screening_rescreen(
    namespace: Annotated[str | None, typer.Option(help="only turns of this namespace")] = None,
    wait: Annotated[bool, typer.Option(help="wait for the runs to finish")] = False,
    timeout: Annotated[int, typer.Option(help="seconds --wait waits at most")] = 300,
) -> None:
    """Judge again, with this build's rules, the turns older screening rules judged (the rescreen
    pass, by hand; at most LOOM_RESCREEN_MAX_RUNS runs of LOOM_RESCREEN_BATCH turns a firing)."""
    _check_range("--timeout", timeout, range(1, 86_401))
    with _connected():
        from schedules.registry import passes
        from workers.stages.screening import rescreen_outdated

        scheduled = passes()["rescreen"]
        _fire(dataclasses.replace(scheduled, run=lambda: rescreen_outdated(namespace)), wait, timeout)


def _fire(chosen, wait: bool, timeout: int) -> None:
    """Fire a pass as the operator, and with ``wait`` wait for the runs it sent."""
    from models.stage_run import PENDING, RUNNING
    from schedules.record import PassBusy, fire
    from workers import ledger

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
    _check_range("--timeout", timeout, range(1, 86_401))
    try:
        loom_id = uuid.UUID(loom) if loom is not None else None
    except ValueError as exc:
        raise fail(f"--loom: {loom!r} is not a loom id (a uuid; `loom op looms.list` shows them)") from exc
    with _connected():
        from schedules.registry import passes
        from workers.stages.night_weaving import weave_night

        scheduled = passes()["night_weaving"]
        _fire(dataclasses.replace(scheduled, run=lambda: weave_night(loom_id, by="operator")), wait, timeout)


@night_app.command("list")
def night_weave_list(
    limit: Annotated[int, typer.Option(help="the newest weavings shown")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="one JSON object a line")] = False,
) -> None:
    """The night weavings, newest first: when, by whom, the sessions sent and consolidated, the
    episodes woven and the threads judged."""
    _check_range("--limit", limit, range(1, 100_001))
    with services.running(start="database"):
        weavings = _call("night_weaving.list", {"limit": limit})["nights"]
    if as_json:
        for w in weavings:
            out.print(json.dumps(w), markup=False, highlight=False, soft_wrap=True)
        return
    from rich import box

    columns = ("id", "loom", "started", "finished", "sessions", "consolidated", "episodes", "judged", "by")
    table = Table(*columns, box=box.SIMPLE)
    for w in weavings:
        table.add_row(
            w["id"],
            w["loom_id"] or "all",
            _when(w["started_at"]),
            _when(w["finished_at"]),
            str(w["sessions"]),
            str(w["consolidated"]),
            str(w["episodes"]),
            str(w["judged"]),
            w["by"],
        )
    out.print(table)


@erasure_app.command("list")
def erasure_list(
    limit: Annotated[int, typer.Option(help="the newest events shown")] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="one JSON object a line")] = False,
) -> None:
    """The erasure log, newest first: who asked, when, what scope, how many rows (requests, their
    finishing, exports). Ask for one with `loom op erasure.request BODY`."""
    _check_range("--limit", limit, range(1, 100_001))
    with services.running(start="database"):
        events = _call("erasure.list", {"limit": limit})["events"]
    if as_json:
        for e in events:
            out.print(json.dumps(e), markup=False, highlight=False, soft_wrap=True)
        return
    from rich import box

    table = Table("id", "erasure", "event", "at", "by", "scope", "rows", box=box.SIMPLE)
    for e in events:
        table.add_row(
            str(e["id"]),
            str(e["erasure_id"] or "-"),
            e["event"],
            _when(e["at"]),
            e["actor"],
            json.dumps(e["scope"]),
            json.dumps(e["rows"]) if e["rows"] is not None else "-",
        )
    out.print(table)


@erasure_app.command("export")
def erasure_export(
    namespace: Annotated[str, typer.Option(help="the person's namespace")],
    user_id: Annotated[str, typer.Option(help="the person")],
    tombstoned: Annotated[bool, typer.Option(help="include tombstoned turns")] = True,
) -> None:
    """A person's turns as one JSON document on stdout, written while it is read (erasure.export)."""
    with services.running(start="database"):
        from ops.schemas import Streamed

        body = {"namespace": namespace, "user_id": user_id, "include_tombstoned": tombstoned}
        answer = _call("erasure.export", body)
        assert isinstance(answer, Streamed)
        for chunk in answer.chunks:
            sys.stdout.buffer.write(chunk)
        sys.stdout.buffer.write(b"\n")


@app.command()
def mcp(
    namespace: Annotated[
        str | None, typer.Option(help="the namespace the tools act in (without LOOM_TOKEN)")
    ] = None,
    toolset: Annotated[str, typer.Option(help="core, or all (adds loom_conversation_append)")] = "core",
    role: Annotated[str, typer.Option(help="the role the tools act with, without LOOM_TOKEN")] = "writer",
) -> None:
    """MCP over stdio for a local client (Claude Code, Codex, Cursor…): the tools act in the
    namespace with the role given, or with the grants of the token in LOOM_TOKEN."""
    from api import mcp as mcp_server
    from models.namespace import ROLES
    from ops.caller import Caller, authenticate
    from ops.errors import OpError

    _check_choice("--toolset", toolset, mcp_server.TOOLSETS)
    _check_choice("--role", role, ROLES)
    with _connected():
        if token := os.environ.get("LOOM_TOKEN"):
            try:
                caller = authenticate(f"Bearer {token}")
            except OpError as exc:
                raise fail(f"LOOM_TOKEN: {exc.reason}") from exc
        elif namespace is None:
            raise fail("--namespace is required without LOOM_TOKEN")
        else:
            caller = Caller(role=role, namespaces=(namespace,), who="mcp stdio")
        mcp_server.build(toolset, caller).run("stdio")


# --- session briefs ------------------------------------------------------------------------------


def _json_file(path: str, what: str) -> object:
    """A JSON document from a file (``-``: stdin); a clear error for one that is not."""
    from ops.errors import OpError
    from ops.limits import parse_body

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
    }
    with _connected():
        answer = _call("session.brief_save", _given(body))
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
        answer = _call("session.brief_get", _given(body))
    print(json.dumps(answer, indent=2) if as_json else answer["markdown"])


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
        answer = _call("session.brief_list", _given(body))
    for brief in answer["briefs"]:
        if as_json:
            print(json.dumps(brief))
        else:
            print(
                f"{brief['updated_at'][:19]}  r{brief['revision']:<3} {brief['brief_key']}  {brief['line']}"
            )


@brief_app.command("delete")
def brief_delete(
    namespace: Annotated[str, typer.Option(help="the brief's namespace")],
    key: Annotated[str, typer.Option(help="the brief_key")],
) -> None:
    """session.brief_delete: forget a brief and its revisions."""
    with services.running(start="database"):
        answer = _call("session.brief_delete", {"namespace": namespace, "brief_key": key})
    print(f"{key}: {'deleted' if answer['deleted'] else 'no such brief'}")


@app.command("ingest-transcript")
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
    from pipelines.transcripts import TranscriptError, default_thread_id, parse_transcript

    _check_range("--timeout", timeout, range(1, 121))
    _check_range("--first-line", first_line, range(1, 1_000_000_001))
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
    with _connected():
        from workers import broker

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
        answer = _call("conversation.ingest", {**body, "wait": wait, "wait_seconds": timeout})
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


@app.command()
def search(
    namespace: str,
    query: str,
    limit: int = 10,
    thread_id: Annotated[str | None, typer.Option()] = None,
) -> None:
    """conversation.search from the command line; prints the JSON answer."""
    with services.running(start=services.DATABASE):  # the database and the in-process embedder
        body = {"namespace": namespace, "query": query, "limit": limit, "thread_id": thread_id}
        answer = _call("conversation.search", _given(body))
    print(json.dumps(answer, indent=2))


@app.command("op")
def call_op(
    name: Annotated[str, typer.Argument(help="the op, e.g. conversation.compact")],
    body: Annotated[str, typer.Argument(help="its JSON body, as POST /v1/<op> takes it")] = "{}",
) -> None:
    """Any op of the HTTP API, as the operator (every namespace, admin); prints the JSON answer.
    E.g. loom op conversation.delete '{"namespace": "ns", "thread_id": "t", "confirm_thread_id": "t"}'."""
    from ops.errors import OpError
    from ops.limits import parse_body

    try:
        parsed = parse_body(body.encode())
    except OpError as exc:
        raise fail(exc.reason) from exc
    with _connected():
        answer = _call(name, parsed)
    print(json.dumps(answer, indent=2))


@app.command()
def status() -> None:
    """Services, queues, failed runs and the oldest pending run at a glance. Starts nothing: a
    server that is not running is reported down, and the exit code is then 1."""
    from rich import box
    from rich.text import Text

    from models.settings import get_settings
    from ops import status as system

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


if __name__ == "__main__":
    sys.exit(app())
