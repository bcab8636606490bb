"""What every command prints through, and cheaply (``loom search`` imports this and no more of
the CLI): the consoles, the one-line refusal, a body's unset options left out."""

import typer
from rich.console import Console

out = Console()
err = Console(stderr=True)


def fail(message: str, code: int = 2) -> typer.Exit:
    """One line saying what is wrong, and a non-zero exit (2 unless said otherwise)."""
    err.print(f"error: {message}", markup=False, highlight=False, soft_wrap=True)  # one line, however long
    return typer.Exit(code)


def given(body: dict) -> dict:
    """A body without the options left unset (the op's defaults apply)."""
    return {name: value for name, value in body.items() if value is not None}
