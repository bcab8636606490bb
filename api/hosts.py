"""The Host names Loom answers to, checked on every request (``HostCheck``): the loopback names,
which a command on this machine uses (``Settings.local_api_url``), and the names the operator lists
in ``LOOM_ALLOWED_HOSTS``. Another site whose name resolves to this address (DNS rebinding) is
refused before any route, and the dashboard's Origin check compares with a Host that is Loom's
own. A request carries exactly one Host: with two, one layer could read the first and another the
second. (A request target in absolute form names the host itself: ``api.server`` makes it the
Host.)"""

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from models.settings import LOOPBACK_NAMES, Settings


def answered(settings: Settings) -> list[str]:
    # A Host header names an IPv6 address in brackets.
    return [f"[{name}]" if ":" in name else name for name in (*LOOPBACK_NAMES, *settings.allowed_hosts)]


def unlisted(settings: Settings) -> str | None:
    """Why the API must not start: it listens beyond the loopback and no name is listed."""
    if settings.allowed_hosts or settings.host in LOOPBACK_NAMES or settings.host.startswith("127."):
        return None
    return (
        f"LOOM_HOST is {settings.host or '(all addresses)'}: list the names clients reach Loom by in "
        "LOOM_ALLOWED_HOSTS (comma-separated, e.g. loom.internal,10.0.0.5)"
    )


def host_name(value: str) -> str | None:
    """The name a Host header gives (without its port), lowercased; None when it is malformed."""
    if value.startswith("["):
        name, bracket, after = value.partition("]")
        name += bracket
        port: str | None = after.removeprefix(":") if after.startswith(":") else (None if after else "")
    else:
        name, _, port = value.partition(":")
    if not name or port is None or (port and not port.isdigit()):
        return None
    return name.lower()


class HostCheck:
    """Refuses (400, ``{"error": …}``) a request whose Host is not one of ``names`` (``*.domain``
    for its subdomains), or that carries no Host or more than one."""

    def __init__(self, app: ASGIApp, names: list[str]) -> None:
        self.app = app
        self.names = frozenset(name.lower() for name in names if not name.startswith("*."))
        self.domains = tuple(name[1:].lower() for name in names if name.startswith("*."))

    def answers(self, name: str | None) -> bool:
        return name is not None and (name in self.names or name.endswith(self.domains))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        hosts = [value for name, value in scope["headers"] if name == b"host"]
        if len(hosts) > 1:
            reason = "the request carries more than one Host header"
        elif not hosts:
            reason = "the request carries no Host header"
        elif not self.answers(host_name(hosts[0].decode("latin-1"))):
            reason = "the Host header names no host this server answers to (LOOM_ALLOWED_HOSTS)"
        else:
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008, "reason": reason})
        else:
            await JSONResponse({"error": reason}, status_code=400)(scope, receive, send)
