"""The edges of a request: a client gone mid-body, a Host given twice, a body that is not JSON, a
body sent without a valid token, a path that is no route. Each is a 4xx in the documented shape
(``{"error": …}``), or, for a client that is gone, a debug line."""

import http.client
import json
import logging
import socket
import time

import pytest

from tests.support.calls import enable_logging

NS = "edges"
APPEND = {"namespace": NS, "thread_id": "t", "role": "user", "content": "hello"}


@pytest.fixture(scope="module", autouse=True)
def recording():
    enable_logging(NS)


def address(live_api: str) -> tuple[str, int]:
    host, port = live_api.removeprefix("http://").split(":")
    return host, int(port)


def raw_answer(live_api: str, request: bytes, timeout: float = 10) -> tuple[int, dict]:
    """The status and JSON body of the answer to raw request bytes (the request closes the
    connection)."""
    with socket.create_connection(address(live_api), timeout=timeout) as sock:
        sock.sendall(request)
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def test_a_client_gone_mid_body_is_a_debug_line_not_a_traceback(live_api, make_token, caplog):
    caplog.set_level(logging.DEBUG, logger="api")
    for _ in range(5):
        with socket.create_connection(address(live_api), timeout=10) as sock:
            sock.sendall(
                b"POST /v1/conversation.append HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + f"Authorization: {make_token(NS)['Authorization']}\r\n".encode()
                + b"Content-Type: application/json\r\nContent-Length: 5000\r\n\r\n"
                + b'{"content": "'
            )
            time.sleep(0.2)  # the app is reading the body
    deadline = time.monotonic() + 5
    while len([r for r in caplog.records if "disconnected" in r.getMessage()]) < 5:
        assert time.monotonic() < deadline, [r.getMessage() for r in caplog.records]
        time.sleep(0.05)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING and r.name.startswith("api")]
    assert not [r for r in caplog.records if r.exc_info]
    gone = [r for r in caplog.records if "disconnected" in r.getMessage()]
    assert {r.levelno for r in gone} == {logging.DEBUG}


@pytest.mark.parametrize(
    "hosts",
    [("127.0.0.1", "attacker.example"), ("attacker.example", "127.0.0.1"), ("127.0.0.1", "127.0.0.1")],
)
def test_a_request_with_two_host_headers_is_refused(live_api, hosts):
    lines = "".join(f"Host: {host}\r\n" for host in hosts)
    status, body = raw_answer(live_api, f"GET /healthz HTTP/1.1\r\n{lines}Connection: close\r\n\r\n".encode())
    assert status == 400 and "host" in body["error"].lower(), body


def test_a_request_with_one_loopback_host_is_answered(live_api):
    status, body = raw_answer(
        live_api, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    assert status == 200 and body == {"status": "ok"}


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "multipart/form-data; boundary=x", "application/xml", "application/jsonx", "json"],
)
def test_a_body_that_is_not_json_is_a_415(client, make_token, content_type):
    body = json.dumps(APPEND).encode()
    headers = {**make_token(NS), "Content-Type": content_type}
    answer = client.post("/v1/conversation.append", content=body, headers=headers)
    assert answer.status_code == 415, answer.text
    assert "application/json" in answer.json()["error"] and set(answer.json()) == {"error"}
    thread = client.put("/api/threads/T-x", content=b"{}", headers=headers)
    assert thread.status_code == 415 and "application/json" in thread.json()["error"]


@pytest.mark.parametrize(
    "content_type",
    [
        "application/json",
        "application/json; charset=utf-8",
        "Application/JSON",
        "application/merge-patch+json",
        # What curl -d sends unless told otherwise (the README's tour and docs/http-api.md use it).
        "application/x-www-form-urlencoded",
        None,  # no Content-Type: JSON, the only type the ops take
    ],
)
def test_a_json_body_is_taken_under_the_types_clients_send(client, make_token, content_type):
    headers = make_token(NS) | ({"Content-Type": content_type} if content_type else {})
    body = json.dumps({**APPEND, "content": f"sent as {content_type}"}).encode()
    answer = client.post("/v1/conversation.append", content=body, headers=headers)
    assert answer.status_code == 200 and answer.json()["stored"] is True, answer.text


@pytest.mark.parametrize(
    "authorization", [None, "Bearer loom_not-a-token", "Basic x"], ids=["none", "unknown", "basic"]
)
def test_the_token_is_checked_before_the_body_is_read(live_api, authorization):
    conn = http.client.HTTPConnection(*address(live_api), timeout=5)
    conn.putrequest("POST", "/v1/conversation.append")
    if authorization:
        conn.putheader("Authorization", authorization)
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Content-Length", "5000")
    conn.endheaders()
    conn.send(b'{"content": "')  # and no more: an answer that waited for the body would time out
    answer = conn.getresponse()
    assert answer.status == 401 and json.loads(answer.read())["error"]
    conn.close()


def test_a_role_below_the_op_is_refused_before_the_body_is_read(live_api, make_token):
    conn = http.client.HTTPConnection(*address(live_api), timeout=5)
    conn.putrequest("POST", "/v1/conversation.append")
    conn.putheader("Authorization", make_token(NS, role="viewer")["Authorization"])
    conn.putheader("Content-Length", "5000")
    conn.endheaders()
    conn.send(b'{"content": "')
    answer = conn.getresponse()
    assert answer.status == 403 and "role" in json.loads(answer.read())["error"]
    conn.close()


def test_a_thread_upload_checks_the_token_before_its_body(live_api):
    conn = http.client.HTTPConnection(*address(live_api), timeout=5)
    conn.putrequest("PUT", "/api/threads/T-x")
    conn.putheader("Content-Length", "5000")
    conn.endheaders()
    conn.send(b"{")
    answer = conn.getresponse()
    assert answer.status == 401 and json.loads(answer.read())["error"]
    conn.close()


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/nope", 404),
        ("POST", "/nope", 404),
        ("GET", "/v1/conversation.append", 405),
        ("DELETE", "/healthz", 405),
        ("GET", "/api/threads/T-x/extra", 404),
    ],
)
def test_a_path_that_is_no_route_answers_the_error_shape(client, method, path, status):
    answer = client.request(method, path)
    assert answer.status_code == status, answer.text
    assert set(answer.json()) == {"error"} and path in answer.json()["error"], answer.json()
    if status == 405:
        assert answer.headers["allow"]
