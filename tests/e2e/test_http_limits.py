"""The HTTP server's own limits, below the app, against `loom up` over raw sockets: a request's
line and headers are bounded in size (431) and in the time to send them (408), connections in
number (a 503 beyond the limit, never a reset), and none of it stalls `/healthz` for the others.
An absolute-form target names the request's host, which must be one Loom answers to."""

import json
import socket
import statistics
import threading
import time

import httpx
import pytest

from tests.e2e.conftest import running_loom

pytestmark = pytest.mark.e2e

MAX_CONNECTIONS = 40
HEADER_TIMEOUT = 3


@pytest.fixture(scope="module")
def served():
    with running_loom(
        "loom-limits-",
        LOOM_API_MAX_CONNECTIONS=str(MAX_CONNECTIONS),
        LOOM_API_HEADER_TIMEOUT_SECONDS=str(HEADER_TIMEOUT),
    ) as loom:
        yield loom


def connect(loom, timeout: float = 30) -> socket.socket:
    return socket.create_connection(("127.0.0.1", loom.port), timeout=timeout)


def answer_of(sock: socket.socket) -> tuple[int, dict, dict]:
    """The status, headers and JSON body of the one answer the connection gets, read to its end."""
    raw = b""
    while chunk := sock.recv(65536):
        raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
    return int(status_line.split()[1]), headers, json.loads(body)


def healthz_seconds(loom) -> float:
    started = time.monotonic()
    answer = httpx.get(f"http://127.0.0.1:{loom.port}/healthz", timeout=60)
    assert answer.status_code == 200, answer.text
    return time.monotonic() - started


def usual_healthz_seconds(loom) -> float:
    return statistics.median(healthz_seconds(loom) for _ in range(10))


def healthz_while(loom, busy: threading.Thread) -> list[float]:
    """/healthz's latencies, one after another, while ``busy`` runs."""
    latencies = []
    while busy.is_alive():
        latencies.append(healthz_seconds(loom))
        time.sleep(0.02)
    return latencies


def test_a_128_mb_header_is_a_431_after_64_kib_and_healthz_stays_fast(served):
    usual = usual_healthz_seconds(served)
    sock = connect(served, timeout=60)
    answers: list = []
    sent = {"bytes": 0}

    def read() -> None:
        answers.append(answer_of(sock))

    def send() -> None:
        try:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
            chunk = b"a" * 65536
            for _ in range(128 * 16):
                sock.sendall(chunk)
                sent["bytes"] += len(chunk)
            sock.sendall(b"\r\n\r\n")
        except OSError:
            pass  # the server closed the connection after answering: the rest was never read

    reader, sender = threading.Thread(target=read), threading.Thread(target=send)
    started = time.monotonic()
    reader.start()
    sender.start()
    latencies = healthz_while(served, sender)
    sender.join()
    reader.join(30)
    sock.close()
    print(
        f"/healthz: usual {usual * 1000:.1f} ms, worst {max(latencies) * 1000:.1f} ms while a 128 MB "
        f"header was sent ({len(latencies)} calls, {sent['bytes'] / 2**20:.0f} MB sent in "
        f"{time.monotonic() - started:.1f} s)"
    )
    status, headers, body = answers[0]
    assert status == 431 and "65536" in body["error"], body
    assert headers["connection"] == "close"
    assert max(latencies) < max(0.5, 20 * usual), latencies
    assert time.monotonic() - started < 20


def test_a_header_sent_slowly_is_a_408_after_the_header_timeout_and_healthz_stays_fast(served):
    usual = usual_healthz_seconds(served)
    sock = connect(served)
    stop = threading.Event()

    def drip() -> None:
        try:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            while not stop.wait(0.2):
                sock.sendall(b"a")
        except OSError:
            pass

    dripping = threading.Thread(target=drip)
    started = time.monotonic()
    dripping.start()
    answers: list = []
    reader = threading.Thread(target=lambda: answers.append(answer_of(sock)))
    reader.start()
    latencies = healthz_while(served, reader)
    took = time.monotonic() - started
    stop.set()
    dripping.join()
    sock.close()
    print(
        f"/healthz: usual {usual * 1000:.1f} ms, worst {max(latencies) * 1000:.1f} ms while a header dripped"
    )
    status, _, body = answers[0]
    assert status == 408 and body["error"], body
    assert HEADER_TIMEOUT - 0.5 < took < HEADER_TIMEOUT + 5
    assert max(latencies) < max(0.5, 20 * usual), latencies


def test_a_connection_that_sends_nothing_is_closed_after_the_header_timeout(served):
    sock = connect(served)
    started = time.monotonic()
    assert sock.recv(1) == b""  # closed, no answer: it asked nothing
    assert HEADER_TIMEOUT - 0.5 < time.monotonic() - started < HEADER_TIMEOUT + 5
    sock.close()


def test_a_client_beyond_the_connection_limit_gets_a_503_and_the_others_are_served_after(served):
    idle = [connect(served) for _ in range(MAX_CONNECTIONS)]
    try:
        time.sleep(0.3)  # every one accepted
        beyond = []
        for _ in range(5):
            sock = connect(served)
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            beyond.append(answer_of(sock))
            sock.close()
        for status, headers, body in beyond:
            assert status == 503 and "LOOM_API_MAX_CONNECTIONS" in body["error"], body
            assert headers["retry-after"].isdigit() and headers["connection"] == "close"
    finally:
        for sock in idle:
            sock.close()
    assert httpx.get(f"http://127.0.0.1:{served.port}/healthz", timeout=10).status_code == 200


@pytest.mark.parametrize(
    ("target", "status"),
    [
        ("http://attacker.example/healthz", 400),
        ("http://attacker.example:7777/healthz", 400),
        ("http://127.0.0.1/healthz", 200),
    ],
)
def test_an_absolute_form_target_names_the_host_it_is_checked_as(served, target, status):
    sock = connect(served)
    sock.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
    got, _, body = answer_of(sock)
    sock.close()
    assert got == status, body
    if status == 400:
        assert "host" in body["error"].lower()
