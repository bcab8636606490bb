"""The errors a Loom call raises: one class per status a caller handles differently."""


class LoomError(Exception):
    """Loom answered an error (``status``), with its ``reason`` and the ``field`` it names, if any."""

    def __init__(self, status: int, reason: str, field: str | None = None) -> None:
        super().__init__(f"{status}: {reason}")
        self.status = status
        self.reason = reason
        self.field = field


class Unauthorized(LoomError):
    """401: no token, or one Loom does not know (revoked)."""


class Forbidden(LoomError):
    """403: the token's role or namespaces do not allow the call."""


class NotFound(LoomError):
    """404: no such op, thread or brief."""


class Conflict(LoomError):
    """409: a compare-and-set failed (``if_revision``), or the server lacks what the op needs."""


class Invalid(LoomError):
    """422 (or 400, 413): the request is not one Loom takes; ``field`` names what is wrong."""


class Unavailable(LoomError):
    """503: Loom cannot serve it now (its database, or every model call of a brief save); the
    client retried with backoff before raising it."""


class ConnectionFailed(LoomError):
    """Loom could not be reached, after the client's retries."""


BY_STATUS = {401: Unauthorized, 403: Forbidden, 404: NotFound, 409: Conflict, 503: Unavailable}


def from_answer(status: int, body: object) -> LoomError:
    reason = body.get("error", "") if isinstance(body, dict) else str(body)
    field = body.get("field") if isinstance(body, dict) else None
    kind = BY_STATUS.get(status, Invalid if status in (400, 413, 422) else LoomError)
    return kind(status, reason or f"HTTP {status}", field)
