"""What the command groups share beyond ``commands.console``: an op called as the operator, the running
system reached (its broker set up), an option's choice or range checked."""

import contextlib
from collections.abc import Iterator

import services
from commands import progress
from commands.console import fail
from ops import registry
from ops.caller import OPERATOR
from ops.errors import OpError
from ops.schemas import Streamed
from workers import broker


def call(op: str, body: object) -> dict:
    """The op's JSON answer, called as the operator (admin of every namespace); a refusal is one
    line. An answer that waits on runs is waited for as ``registry.call`` would, showing its progress."""
    answer = answered(op, body)
    assert isinstance(answer, dict), f"{op} streams its answer: call it with streamed()"
    return answer


def streamed(op: str, body: dict) -> Streamed:
    """The answer of an op that streams it (``erasure.export``), called as ``call`` does."""
    answer = answered(op, body)
    assert isinstance(answer, Streamed), f"{op} answers JSON: call it with call()"
    return answer


def answered(op: str, body: object) -> dict | Streamed:  # the registry refuses a body not an object
    """The op's answer whichever kind it is (``loom op`` takes any op): ``call`` and ``streamed``
    are for a caller that knows."""
    try:
        return registry.call(
            op, OPERATOR, body, block=lambda wait: progress.block(wait.check, wait.seconds, op)
        )
    except OpError as exc:
        raise fail(exc.reason) from exc


@contextlib.contextmanager
def connected() -> Iterator[services.Endpoints]:
    """The running system, for a command that needs it all: the servers answer (else one line,
    exit 75) and this process's broker is set up on their Redis."""
    with services.running(start=None) as endpoints:
        broker.setup(endpoints.redis_url)
        yield endpoints


def check_choice(name: str, value: str | None, choices: tuple[str, ...]) -> None:
    if value is not None and value not in choices:
        raise fail(f"{name} must be one of {', '.join(choices)}")


def check_range(name: str, value: int | None, allowed: range) -> None:
    if value is not None and value not in allowed:
        raise fail(f"{name} must be between {allowed.start} and {allowed.stop - 1}")
