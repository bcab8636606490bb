"""The one error an op raises for a caller's mistake; HTTP and the CLI both render it."""


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


def invalid(reason: str, field: str | None = None) -> OpError:
    return OpError(422, reason, field)
