"""The ``loom`` command: the processes (up, api, worker, scheduler, mcp) and the commands of
operators, capture scripts and developers, one module of ``commands`` a command group (mirroring
``ops/``). Thin: a command checks its options, reaches the servers (``services.running``, or
``commands.common.connected`` for one that needs the running system) and calls an op as the
operator, or starts a process.

A command's module is imported only when that command runs (or ``--help`` lists them all): ``loom
search`` loads what a search needs, not every command's imports (the op layer, the broker, the
servers' packages)."""

from __future__ import annotations  # the click types below are the checker's alone

import importlib
import sys
from typing import TYPE_CHECKING

import typer
from typer.core import TyperGroup

if TYPE_CHECKING:  # the types TyperGroup's methods take: typer's own copy of click (not the click package)
    from typer._click import Command, Context

# Each command: the module defining it and its Typer group or function, ``module:attribute``; by
# the task ``loom --help`` lists it under.
PANELS = {
    "Run Loom": {
        "up": "commands.processes:up",
        "api": "commands.processes:api",
        "worker": "commands.processes:worker",
        "scheduler": "commands.processes:scheduler",
        "mcp": "commands.processes:mcp",
        "status": "commands.status:status",
    },
    "Capture and search": {
        "search": "commands.search:search",
        "ingest-transcript": "commands.conversation:ingest_transcript",
        "op": "commands.conversation:call_op",
    },
    "Memory and briefs": {
        "brief": "commands.briefs:brief_app",
        "night-weave": "commands.passes:night_app",
    },
    "Operate: runs and passes": {
        "runs": "commands.runs:runs_app",
        "passes": "commands.passes:passes_app",
        "screening": "commands.passes:screening_app",
    },
    "Tokens and namespaces": {
        "tokens": "commands.tokens:tokens_app",
        "namespaces": "commands.namespaces:namespaces_app",
    },
    "Data: backup, erasure": {
        "backup": "commands.backup:backup",
        "restore": "commands.backup:restore",
        "erasure": "commands.erasure:erasure_app",
        "db": "commands.db:db_app",
    },
    "Coding-session threads": {
        "threads": "commands.threads:threads_app",
        "login": "commands.threads:login",
        "new": "commands.threads:new",
        "resume": "commands.threads:resume",
        "share": "commands.threads:share",
        "private": "commands.threads:private",
    },
}
COMMANDS = {name: target for commands in PANELS.values() for name, target in commands.items()}
PANEL = {name: panel for panel, commands in PANELS.items() for name in commands}


class _Commands(TyperGroup):
    """The commands of COMMANDS, each imported when asked for."""

    def list_commands(self, ctx: Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, attribute = target.split(":")
        found = getattr(importlib.import_module(module), attribute)
        command: Command
        if isinstance(found, typer.Typer):  # a group, even of one command (``loom namespaces logging``)
            command = typer.main.get_group(found)
            command.rich_help_panel = PANEL[cmd_name]
        else:  # a function: the one command of a Typer of its own
            single = typer.Typer(add_completion=False)
            single.command(cmd_name, rich_help_panel=PANEL[cmd_name])(found)
            command = typer.main.get_command(single)
        command.name = cmd_name
        return command


app = typer.Typer(cls=_Commands, no_args_is_help=True, add_completion=False)


@app.callback()
def loom() -> None:
    """Loom: conversation memory for AI agents."""
    from commands.console import fail
    from models.settings import refused

    if mistake := refused():  # a LOOM_ variable out of its bounds: one line, before any command
        raise fail(mistake)


if __name__ == "__main__":  # ``python -m cli``: the command without its console script
    sys.exit(app(prog_name="loom"))
