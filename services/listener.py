"""The API's listening socket. `loom up` binds it before anything else starts and hands it to each
API process it runs: while a killed API process is replaced, connections wait in the socket's
backlog (a slower answer) instead of being refused, and a port another program holds stops
`loom up` in one line before any server or child has started."""

import socket

# Connections the kernel holds while no API process accepts: 20 a second for a restart of several
# seconds fits many times over (the kernel caps it at net.core.somaxconn).
BACKLOG = 2048


class PortBusy(Exception):
    pass


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family, backlog=BACKLOG)
    except OSError as exc:
        raise PortBusy(
            f"cannot listen on {host}:{port} ({exc.strerror or exc}): another program holds it; "
            "stop it or choose another port with LOOM_PORT"
        ) from exc
