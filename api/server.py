"""The HTTP server under the app: uvicorn over httptools, with the limits no client (a token or
not) may pass enforced below the app, before any of it runs, each answered in the error shape
(``{"error": …}``) and never with a dropped connection:

- a request's line and headers: ``LOOM_API_MAX_HEADER_BYTES`` in all (64 KiB) and at most
  ``MAX_HEADER_FIELDS`` fields, else 431;
- the time to send them: ``LOOM_API_HEADER_TIMEOUT_SECONDS`` from the connection's start (or the
  head's first byte on a kept-alive connection), else 408, or a plain close for a connection
  that sent nothing;
- connections open at once: ``LOOM_API_MAX_CONNECTIONS`` (kept below the process's file
  descriptor limit), beyond which a connection is answered 503 with ``Retry-After`` at once.

httptools gathers a header's value by concatenating each piece it reads to the piece before, so a
value of n bytes costs n²/piece in copies, on the event loop: unbounded, a 128 MB header stalled
every other request for seconds. Here the parser is fed the head in small pieces and the head is
refused once past its cap, so no piece of work on the loop grows with what a client sends.

A request target in absolute form (``GET http://name/path``) names the request's host (RFC 9112
§3.2.2): it replaces the Host header, which ``api.hosts`` then checks like any other.

A refusal is written at once, the connection half-closed, and what the client still sends read
and dropped for ``LINGER_SECONDS`` before the close: closing with its bytes unread would reset the
connection and could lose the answer."""

import asyncio
import dataclasses
import json
import logging
import resource
import time

import httptools
import uvicorn
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from models.settings import Settings

log = logging.getLogger(__name__)

MAX_HEADER_FIELDS = 100
KEEP_ALIVE_SECONDS = 5  # an idle kept-alive connection is closed after this (uvicorn's default)
LINGER_SECONDS = 2.0
PIECE = 8 * 1024  # what the parser is fed at once while a head may be in it
FD_RESERVE = 128  # file descriptors kept for the process's own (database, broker, files)
RETRY_AFTER_SECONDS = 1


@dataclasses.dataclass(frozen=True)
class Limits:
    max_header_bytes: int
    header_timeout: float
    max_connections: int


class _TooManyFields(Exception):
    pass


class LimitedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, bounded (``protocol`` makes one with its ``limits``)."""

    limits: Limits
    _warned_at = float("-inf")  # the last warning that connections were refused (one a minute)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # The bytes of the head being received; None from its end to its message's end.
        self._head: int | None = 0
        self._heads = 0  # heads begun, which tells a head that began inside a piece
        self._body_left: int | None = None  # the message's body still to come; None: unknown (chunked)
        self._tail = b""  # the head's last bytes so far: its end may straddle two pieces
        self._deadline: asyncio.TimerHandle | None = None
        self._refusing = False
        self._pending: tuple[int, str, bool] | None = None  # a refusal waiting for an answer to end
        self._linger: asyncio.TimerHandle | None = None

    # --- the connection ----------------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections:
            self._warn_refused()
            self._refuse(
                503,
                f"the server has {self.limits.max_connections} connections open, its limit "
                "(LOOM_API_MAX_CONNECTIONS); retry later",
                retry_after=True,
            )
            return
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._linger is not None:
            self._linger.cancel()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refusing:
            return  # answered: read and dropped until the client closes or the linger ends
        self._unset_keepalive_if_required()
        if self._head is not None and self._deadline is None:
            self._arm()  # the first bytes of a head on a kept-alive connection
        view = memoryview(data)
        while view:
            if self._head is None:
                # The rest of a body of known length, after which the next head starts.
                size = self._body_left or PIECE
            elif self._head >= self.limits.max_header_bytes:
                self._refuse(431, self._too_large())  # the cap's worth, and the head goes on
                return
            else:
                size = self._to_head_end(view[: min(PIECE, self.limits.max_header_bytes - self._head)])
            piece, view = view[:size], view[size:]
            head, heads = self._head, self._heads
            if not self._feed(piece) or self.transport.get_protocol() is not self:
                return  # refused, or upgraded to another protocol
            if head is not None and self._head is not None and heads == self._heads:
                self._head += len(piece)  # every byte of the piece was of this head
                self._tail = bytes(piece[-3:])

    def _to_head_end(self, piece: memoryview) -> int:
        """How much of the piece to feed: up to the blank line that ends the head, when it is in
        it, so that the head ends with the piece, the body (of known length) with the next, and
        the next request's head begins a piece of its own, counted whole."""
        end = (self._tail + bytes(piece)).find(b"\r\n\r\n")
        return len(piece) if end < 0 else max(1, end + 4 - len(self._tail))

    def _feed(self, piece: memoryview) -> bool:
        """Parse a piece: False once the connection is refused (an invalid request too)."""
        try:
            self.parser.feed_data(piece)
        except httptools.HttpParserUpgrade:
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            else:
                self._unsupported_upgrade_warning()
        except httptools.HttpParserError as exc:
            if isinstance(exc.__context__, _TooManyFields):
                self._refuse(431, f"a request carries at most {MAX_HEADER_FIELDS} header fields")
            else:
                log.debug("invalid HTTP request: %s", exc)
                self._refuse(400, f"the request is not valid HTTP/1.1: {exc}")
            return False
        return not self._refusing

    # --- the parser's callbacks -------------------------------------------------------------

    def on_header(self, name: bytes, value: bytes) -> None:
        if len(self.headers) >= MAX_HEADER_FIELDS:
            raise _TooManyFields
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._disarm()
        self._head = None
        self._body_left = _body_length(self.headers)
        _host_from_target(self.url, self.headers)
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        if self._body_left is not None:
            self._body_left -= len(body)
        super().on_body(body)

    def on_message_complete(self) -> None:
        # The next head's time starts with its first byte (the keep-alive timeout bounds the wait).
        self._disarm()
        self._head, self._heads, self._body_left, self._tail = 0, self._heads + 1, None, b""
        super().on_message_complete()

    # --- the header's deadline and refusals --------------------------------------------------

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.limits.header_timeout, self._timed_out)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _timed_out(self) -> None:
        self._deadline = None
        if self._refusing or self.transport.is_closing() or self._answering():
            return  # the head's time starts again with its next byte
        if not self._head:
            self.transport.close()  # it asked nothing: closed as an idle kept-alive one is
            return
        self._refuse(
            408,
            f"the request's line and headers took longer than {self.limits.header_timeout:g} s "
            "(LOOM_API_HEADER_TIMEOUT_SECONDS)",
        )

    def _answering(self) -> bool:
        return self.cycle is not None and not self.cycle.response_complete

    def _too_large(self) -> str:
        return (
            f"the request's line and headers are larger than {self.limits.max_header_bytes} bytes "
            "(LOOM_API_MAX_HEADER_BYTES)"
        )

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self._pending is not None:
            self._refuse(*self._pending)

    def _refuse(self, status: int, reason: str, retry_after: bool = False) -> None:
        self._refusing = True
        self._disarm()
        if self._answering():
            # A request pipelined behind one being answered: refused once that answer is out.
            self._pending = (status, reason, retry_after)
            return
        self._pending = None
        self._unset_keepalive_if_required()
        body = json.dumps({"error": reason}).encode()
        lines = [STATUS_LINE[status]]
        lines += [b"%s: %s\r\n" % header for header in self.server_state.default_headers]
        lines += [
            b"content-type: application/json\r\n",
            b"content-length: %d\r\n" % len(body),
            b"connection: close\r\n",
        ]
        if retry_after:
            lines.append(b"retry-after: %d\r\n" % RETRY_AFTER_SECONDS)
        self.transport.write(b"".join([*lines, b"\r\n", body]))
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self._linger = self.loop.call_later(LINGER_SECONDS, self.transport.close)

    @classmethod
    def _warn_refused(cls) -> None:
        now = time.monotonic()
        if now - cls._warned_at >= 60:
            cls._warned_at = now
            log.warning("refusing connections beyond LOOM_API_MAX_CONNECTIONS (503; warned once a minute)")


def _body_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    """The body's length as the headers give it: 0 for none, None when it is chunked."""
    length = 0
    for name, value in headers:
        if name == b"transfer-encoding":
            return None
        if name == b"content-length" and value.isdigit():
            length = int(value)
    return length


def _host_from_target(target: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    """An absolute-form target's authority as the request's Host (RFC 9112 §3.2.2: the Host header
    is then ignored), so the host check reads the name the request is for."""
    if target.startswith(b"/") or target == b"*":
        return
    try:
        url = httptools.parse_url(target)
    except httptools.HttpParserInvalidURLError:
        return  # uvicorn refuses it
    if url.host:
        authority = url.host if url.port is None else b"%s:%d" % (url.host, url.port)
        headers[:] = [(name, value) for name, value in headers if name != b"host"]
        headers.append((b"host", authority))


def protocol(limits: Limits) -> type[LimitedHttpToolsProtocol]:
    return type("LoomHttpProtocol", (LimitedHttpToolsProtocol,), {"limits": limits})


def limits(settings: Settings) -> Limits:
    """The settings' limits, the connections kept below the file descriptors this process may open
    (its soft limit raised towards its hard one as far as they need)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = settings.api_max_connections + FD_RESERVE
    if soft != resource.RLIM_INFINITY and soft < wanted:
        raised = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
            soft = raised
        except (ValueError, OSError):
            pass
    connections = settings.api_max_connections
    if soft != resource.RLIM_INFINITY and soft - FD_RESERVE < connections:
        connections = max(1, soft - FD_RESERVE)
        log.warning(
            "LOOM_API_MAX_CONNECTIONS is %d but this process may open %d files: at most %d "
            "connections (raise `ulimit -n`)",
            settings.api_max_connections,
            soft,
            connections,
        )
    return Limits(settings.api_max_header_bytes, settings.api_header_timeout_seconds, connections)


def config(app, settings: Settings, **options) -> uvicorn.Config:
    """uvicorn's configuration for the app, with the limits the settings give."""
    return uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        http=protocol(limits(settings)),
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        access_log=settings.api_access_log,
        **options,
    )
