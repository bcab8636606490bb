"""What the tests' local model servers share: a threaded HTTP server on a free loopback port, run on
a thread of its own, and a handler that reads JSON and answers JSON or a stream of server-sent
events (chunked, as the real APIs stream)."""

import json
import threading
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        pass  # a client that hangs up (the CLIs drop idle connections) is no failure


class LocalServer:
    """``handler`` served on 127.0.0.1 at a port the system picks, from ``start`` to ``stop``."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._server = _Server(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class JsonHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def read_json(self) -> dict:
        length = int(self.headers.get("content-length") or 0)
        return json.loads(self.rfile.read(length) or b"{}")

    def send_json(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_events(self, events: Iterable[tuple[str, dict]], headers: dict[str, str]) -> None:
        """A 200 streaming each (event name, data) as a server-sent event, one chunk apiece."""
        self.send_response(200)
        for name, value in {**headers, "transfer-encoding": "chunked"}.items():
            self.send_header(name, value)
        self.end_headers()
        for event, data in events:
            self._chunk(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
        self._chunk(b"")

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()
