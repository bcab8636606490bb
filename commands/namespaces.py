"""``loom namespaces``: a namespace's recording switch (``conversation.set_logging``)."""

from typing import Annotated

import typer

import services
from commands.common import call
from commands.console import out

namespaces_app = typer.Typer(no_args_is_help=True, help="Namespaces and their recording switch.")


@namespaces_app.command("logging")
def namespaces_logging(
    namespace: str, enabled: Annotated[bool, typer.Option("--on/--off", help="record conversations")]
) -> None:
    """Switch conversation recording for a namespace (off by default)."""
    with services.running(start=services.DATABASE):
        answer = call("conversation.set_logging", {"namespace": namespace, "enabled": enabled})
    out.print(
        f"{namespace}: conversation logging {'on' if answer['conversation_logging_enabled'] else 'off'}"
    )
