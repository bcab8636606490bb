"""The HTTP server's protocol (``api.server``), served by uvicorn as `loom api` serves it, over raw
sockets: its limits refuse what passes them, in the error shape, and let through everything
short of them, whatever the bodies' sizes, their framing, or how requests follow each other on a
connection. (`tests/e2e/test_http_limits.py` measures them under `loom up`.)"""

import http.client
import json
import re
import socket
import threading
import time

import pytest

from api.server import MAX_HEADER_FIELDS
from tests.support.waits import wait_until

HEADER_TIMEOUT = 1.0
MAX_HEADER_BYTES = 16 * 1024


@pytest.fixture(scope="module")
def served(database):
    import uvicorn

    from api import server
    from api.app import create_app
    from models.settings import get_settings
    from services.ports import free_port

    settings = get_settings().model_copy(
        update={
            "port": free_port(),
            "api_header_timeout_seconds": HEADER_TIMEOUT,
            "api_max_header_bytes": MAX_HEADER_BYTES,
        }
    )
    running = uvicorn.Server(server.config(create_app(warm_embedder=False), settings, log_level="warning"))
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    wait_until(lambda: running.started, timeout=30, what="uvicorn to start")
    yield ("127.0.0.1", settings.port)
    running.should_exit = True
    thread.join(10)


def exchange(address, request: bytes) -> list[tuple[int, dict]]:
    """Every answer the connection gets to ``request`` (whose last request closes it)."""
    with socket.create_connection(address, timeout=10) as sock:
        sock.sendall(request)
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
    answers = []
    while raw:
        head, _, rest = raw.partition(b"\r\n\r\n")
        length = int(re.search(rb"(?i)content-length: (\d+)", head).group(1))
        answers.append((int(head.split()[1]), json.loads(rest[:length])))
        raw = rest[length:]
    return answers


def get(path: str = "/healthz", *, close: bool = False, extra: str = "") -> bytes:
    closing = "Connection: close\r\n" if close else ""
    return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}{closing}\r\n".encode()


def post(body: bytes, token: str, *, close: bool = False) -> bytes:
    closing = b"Connection: close\r\n" if close else b""
    return (
        b"POST /v1/conversation.get HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + f"Authorization: {token}\r\nContent-Type: application/json\r\n".encode()
        + b"Content-Length: %d\r\n" % len(body)
        + closing
        + b"\r\n"
        + body
    )


def padded(size: int) -> bytes:
    """A conversation.get body of ``size`` bytes, refused for its unknown field (a 422 naming it)."""
    start = b'{"thread_id": "t", "pad": "'
    return start + b"x" * (size - len(start) - 2) + b'"}'


@pytest.mark.parametrize("size", [29, 30, 8191, 8192, 8193, 65536, 65537, 300_000])
def test_requests_with_bodies_of_any_size_follow_each_other_on_one_connection(served, make_token, size):
    token = make_token("server")["Authorization"]
    answers = exchange(
        served, post(padded(size), token) + get() + post(padded(size), token) + get(close=True)
    )
    assert [status for status, _ in answers] == [422, 200, 422, 200], answers
    assert answers[0][1]["field"] == "pad" and answers[1][1] == {"status": "ok"}


def test_a_chunked_body_is_read_and_the_next_request_answered(served, make_token):
    token = make_token("server")["Authorization"]
    body = padded(20_000)
    chunks = b"".join(
        b"%x\r\n%s\r\n" % (len(piece), piece) for piece in (body[:7], body[7:9000], body[9000:])
    )
    request = (
        b"POST /v1/conversation.get HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + f"Authorization: {token}\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
        + chunks
        + b"0\r\n\r\n"
    )
    answers = exchange(served, request + get(close=True))
    assert [status for status, _ in answers] == [422, 200] and answers[0][1]["field"] == "pad"


def test_a_head_of_the_cap_is_answered_and_one_byte_more_is_a_431(served):
    base = len(get(close=True, extra="X-Pad: \r\n"))
    at_cap = get(close=True, extra=f"X-Pad: {'p' * (MAX_HEADER_BYTES - base)}\r\n")
    assert len(at_cap) == MAX_HEADER_BYTES
    assert exchange(served, at_cap) == [(200, {"status": "ok"})]
    over = get(close=True, extra=f"X-Pad: {'p' * (MAX_HEADER_BYTES - base + 1)}\r\n")
    ((status, body),) = exchange(served, over)
    assert status == 431 and str(MAX_HEADER_BYTES) in body["error"]
    # the same, as the second request of a connection and as the tail of a pipelined one
    (first, (status, _)) = exchange(served, get() + over)
    assert first == (200, {"status": "ok"}) and status == 431


def test_a_long_request_line_counts_in_the_head(served):
    ((status, body),) = exchange(served, get("/healthz?" + "q" * MAX_HEADER_BYTES, close=True))
    assert status == 431 and "LOOM_API_MAX_HEADER_BYTES" in body["error"]


def test_more_header_fields_than_the_limit_is_a_431(served):
    def fields(n: int) -> str:  # Host and Connection, and the rest
        return "".join(f"X-F{i}: v\r\n" for i in range(n - 2))

    assert exchange(served, get(close=True, extra=fields(MAX_HEADER_FIELDS))) == [(200, {"status": "ok"})]
    ((status, body),) = exchange(served, get(close=True, extra=fields(MAX_HEADER_FIELDS + 1)))
    assert status == 431 and str(MAX_HEADER_FIELDS) in body["error"]


def test_what_is_not_http_is_a_400_in_the_error_shape(served):
    ((status, body),) = exchange(served, b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 hello\r\n\r\n")
    assert status == 400 and "HTTP" in body["error"]


def test_the_header_timeout_bounds_the_head_only(served, make_token):
    """Neither a kept-alive connection's pause between requests nor a slow body is the head's
    time; a head that takes longer is a 408."""
    token = make_token("server")["Authorization"]
    conn = http.client.HTTPConnection(*served, timeout=10)
    conn.request("GET", "/healthz")
    assert conn.getresponse().read()
    time.sleep(HEADER_TIMEOUT * 1.5)  # under the keep-alive timeout
    conn.putrequest("POST", "/v1/conversation.get")
    conn.putheader("Authorization", token)
    body = b'{"thread_id": "t", "pad": "x"}'
    conn.putheader("Content-Length", str(len(body)))
    conn.endheaders()
    time.sleep(HEADER_TIMEOUT * 1.5)
    conn.send(body)
    answer = conn.getresponse()
    assert answer.status == 422 and json.loads(answer.read())["field"] == "pad"
    conn.close()

    with socket.create_connection(served, timeout=10) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        started = time.monotonic()
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
    assert raw.startswith(b"HTTP/1.1 408") and b"LOOM_API_HEADER_TIMEOUT_SECONDS" in raw
    assert HEADER_TIMEOUT * 0.8 < time.monotonic() - started < HEADER_TIMEOUT + 3
