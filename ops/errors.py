"""The one error an op raises for a caller's mistake; HTTP and the CLI both render it."""

from collections.abc import Mapping, Sequence
from typing import Any


class OpError(Exception):
    def __init__(self, status: int, reason: str, field: str | None = None) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.field = field

    def as_dict(self) -> dict:
        return {"error": self.reason, **({"field": self.field} if self.field else {})}


def unauthorized(reason: str = "missing or unknown bearer token") -> OpError:
    return OpError(401, reason)


def forbidden(reason: str) -> OpError:
    return OpError(403, reason)


def not_found(reason: str, field: str | None = None) -> OpError:
    return OpError(404, reason, field)


def no_thread(namespace: str, thread_id: str) -> OpError:
    """The 404 of an op naming a thread that does not exist, or was deleted."""
    return not_found(f"no thread {thread_id!r} in namespace {namespace!r}", "thread_id")


def invalid(reason: str, field: str | None = None) -> OpError:
    return OpError(422, reason, field)


def validation_error(errors: Sequence[Mapping[str, Any]], located: bool = False) -> OpError:
    """The first of a validation's errors as the 422 naming its field: pydantic's ``errors()`` for
    a body, or FastAPI's for a route's typed parameters (``located``: their locations start with
    where the value came from, "query", "path" or "body", which is no part of the field's name)."""
    first = errors[0]
    loc = first["loc"][1:] if located else first["loc"]
    field = ".".join(str(part) for part in loc) or None
    return invalid(f"{field}: {first['msg']}" if field else first["msg"], field)
