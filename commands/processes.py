"""The processes: ``loom up`` (everything on one machine), ``api``, ``worker``, ``scheduler``, and
``mcp`` (MCP over stdio). Each but ``up`` needs the running system (``connected``)."""

import contextlib
import os
import shutil
import socket
import sys
import threading
from pathlib import Path
from typing import Annotated

import typer
import uvicorn

import services
from api import hosts
from commands.common import call, check_choice, check_range, connected
from commands.console import fail, say
from models import db
from models.namespace import ROLES
from models.settings import get_settings
from ops import status
from ops.caller import Caller, authenticate
from ops.errors import OpError
from providers.embedders import configured_dimensions, configured_model
from schedules import runner as schedules_runner
from services import listener, logs, supervisor
from services.stopping import exit_on_stop, not_without_supervisor, stacks_on_request
from services.supervisor import Supervisor
from workers import runner


def _check_vector_width() -> None:
    """One vector column holds one width: a configured model of another width is refused at start
    (Loom does not migrate the column), before it could fail every embedding and every search.
    Every host must be configured with the same embedder (``LOOM_EMBED_*``)."""
    width, wanted = db.vector_width(), configured_dimensions()
    if width and width != wanted:
        raise fail(
            f"the embeddings column holds {width}-dimension vectors but {configured_model()} gives "
            f"{wanted}: use a new database for this model, or a model that gives {width} "
            f"(LOOM_EMBED_DIMENSIONS={width} where the endpoint can shorten its vectors)"
        )


READY_POLL_SECONDS = 0.25

Verbose = Annotated[
    bool, typer.Option("--verbose", help="log INFO to the console too (LOOM_LOG_LEVEL sets any level)")
]


def up(verbose: Verbose = False) -> None:
    """Run Loom on one machine: embedded PostgreSQL and Redis, then the API, a worker, the scheduler."""
    settings = get_settings()
    if reason := hosts.unlisted(settings):
        raise fail(reason)
    with contextlib.ExitStack() as stack:
        # While this runs, the embedded servers are this `loom up`'s: a one-off command that had
        # to start one (it died, and the command came first) leaves it running (``supervising``).
        try:
            stack.enter_context(supervisor.claimed(settings.home / "run"))
            # After the claim: a start refused as Loom already runs writes to none of its files.
            _log_to("up", verbose, make_home=True)
            stacks_on_request()  # SIGUSR1 prints the threads' stacks, as in the processes it starts
            api_socket = stack.enter_context(listener.bind(settings.host, settings.port))
        except (supervisor.AlreadyRunning, listener.PortBusy) as exc:
            raise fail(str(exc)) from None
        endpoints = stack.enter_context(services.running(start=services.ALL))
        _check_vector_width()
        settings = get_settings()
        say(f"Loom data in {settings.home}")
        say(f"PostgreSQL {services.masked(endpoints.database_url)}")
        say(f"Redis      {services.masked(endpoints.redis_url)}")
        url = settings.local_api_url  # where a browser or a command on this machine reaches it
        say(f"API on {url}  (GET /healthz, POST /v1/<op>)")
        say(f"Dashboard on {url}/ui  (sign in with a token)")
        loom = as_typed()
        say(f"Get a token: {loom} tokens create --namespace NS --role writer [--recording]")
        say(_recording_line(loom))
        running = Supervisor(settings.home / "run", services.embedded_in_use(endpoints), api_socket)
        ready = threading.Thread(
            target=_say_when_ready, args=(url, running.stopping), name="ready", daemon=True
        )
        ready.start()
        code = running.run()
    raise typer.Exit(code)


def _say_when_ready(url: str, stopping: threading.Event) -> None:
    """The last line of a start: the API answers (the worker and the scheduler say when they are
    up). Nothing once Loom is stopping: a start cut short was never ready."""
    while not status.probe_api(url).ok:
        if stopping.wait(READY_POLL_SECONDS):
            return
    say(f"Ready on {url}. Log files: {logs.folder()}. Ctrl-C stops Loom.")


def _log_to(process: str, verbose: bool, make_home: bool = False) -> None:
    if verbose:
        logs.verbose()  # in the environment: `loom up`'s children log as it does
    logs.setup(process, make_home)


def as_typed(cwd: Path | None = None) -> str:
    """The ``loom`` a person types from here: ``loom`` when that is the one on PATH, else this
    environment's (``.venv/bin/loom`` from the repository, the whole path from elsewhere)."""
    here = Path(sys.executable).parent / "loom"
    found = shutil.which("loom")
    if found and Path(found).resolve() == here.resolve():
        return "loom"
    try:
        return str(here.relative_to(cwd or Path.cwd()))
    except ValueError:
        return str(here)


def _recording_line(loom: str) -> str:
    """Which namespaces record conversations: nothing is kept until one does."""
    on = [
        row["name"]
        for row in call("namespaces.list", {})["namespaces"]
        if row["conversation_logging_enabled"]
    ]
    how = f"{loom} namespaces logging NS --on (or mint with --recording)"
    if not on:
        return f"Recording: off in every namespace (the default), so no turn is kept; turn it on: {how}"
    shown = ", ".join(on[:5]) + (f" and {len(on) - 5} more" if len(on) > 5 else "")
    return f"Recording: on in {shown}; off elsewhere: {how}"


def api(
    fd: Annotated[int | None, typer.Option(hidden=True, help="an inherited listening socket")] = None,
    verbose: Verbose = False,
) -> None:
    """The HTTP API."""
    _log_to("api", verbose)
    # SIGINT or SIGTERM before uvicorn takes them over, and the one uvicorn raises again once it
    # has stopped: a stop that was asked for, exit 0.
    exit_on_stop()
    not_without_supervisor()
    stacks_on_request()
    if reason := hosts.unlisted(get_settings()):
        raise fail(reason)
    with connected():
        _check_vector_width()
        from api import server
        from api.app import create_app  # FastAPI, the dashboard and the MCP SDK (~1 s): for `loom api` alone

        # uvicorn with the HTTP server's limits (``api.server``: header size and time, connections).
        # Its loggers propagate to this process's handlers (``services.logs``) instead of its own.
        config = server.config(create_app(), get_settings(), log_config=None)
        # Under `loom up`, the socket it holds across this process's restarts.
        uvicorn.Server(config).run(sockets=None if fd is None else [socket.socket(fileno=fd)])


def worker(
    threads: Annotated[int | None, typer.Option(help="worker threads")] = None, verbose: Verbose = False
) -> None:
    """A Dramatiq worker running the stages (start as many hosts as the load needs)."""
    check_range("--threads", threads, range(1, 257))
    _log_to("worker", verbose)
    not_without_supervisor()
    stacks_on_request()
    with connected():
        _check_vector_width()
        runner.run(threads or get_settings().worker_threads)


def scheduler(verbose: Verbose = False) -> None:
    """The periodic passes (they only enqueue)."""
    _log_to("scheduler", verbose)
    not_without_supervisor()
    stacks_on_request()
    with connected():
        _check_vector_width()  # its re-embedding pass compares stored vectors with this model
        schedules_runner.run()


def mcp(
    namespace: Annotated[
        str | None, typer.Option(help="the namespace the tools act in (without LOOM_TOKEN)")
    ] = None,
    toolset: Annotated[str, typer.Option(help="core, or all (adds loom_conversation_append)")] = "core",
    role: Annotated[str, typer.Option(help="the role the tools act with, without LOOM_TOKEN")] = "writer",
) -> None:
    """MCP over stdio for a local client (Claude Code, Codex, Cursor…): the tools act in the
    namespace with the role given, or with the grants of the token in LOOM_TOKEN."""
    from api import mcp as mcp_server  # the MCP SDK (~0.8 s): loaded for `loom mcp` alone

    check_choice("--toolset", toolset, mcp_server.TOOLSETS)
    check_choice("--role", role, ROLES)
    with connected():
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
