"""The ``loom`` command: the processes (up, api, worker, scheduler, mcp) and the commands of
operators, capture scripts and developers, one module a command group (mirroring ``ops/``). Thin:
a command checks its options, reaches the servers (``services.running``, or ``cli.common.connected``
for one that needs the running system) and calls an op as the operator, or starts a process."""

import typer

from cli import (
    briefs,
    conversation,
    db,
    erasure,
    namespaces,
    passes,
    processes,
    runs,
    status,
    threads,
    tokens,
)

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Loom: conversation memory for AI agents.")
app.add_typer(tokens.tokens_app, name="tokens")
app.add_typer(runs.runs_app, name="runs")
app.add_typer(db.db_app, name="db")
app.add_typer(namespaces.namespaces_app, name="namespaces")
app.add_typer(passes.passes_app, name="passes")
app.add_typer(passes.screening_app, name="screening")
app.add_typer(erasure.erasure_app, name="erasure")
app.add_typer(passes.night_app, name="night-weave")
app.add_typer(briefs.brief_app, name="brief")
threads.register(app)  # loom threads …, loom login, loom resume / share / private
processes.register(app)  # loom up, api, worker, scheduler, mcp
conversation.register(app)  # loom ingest-transcript, search, op
app.command()(status.status)
