"""The Host names Loom answers to, checked on every request (``TrustedHostMiddleware``): the
loopback names, which a command on this machine uses (``Settings.local_api_url``), and the names
the operator lists in ``LOOM_ALLOWED_HOSTS``. Another site whose name resolves to this address (DNS
rebinding) is refused before any route, and the dashboard's Origin check compares with a Host
that is Loom's own."""

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
