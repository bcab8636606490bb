"""Hostile and malformed input: every one is a 4xx JSON error naming what is wrong, none breaks
the connection it came on, and none loses or changes what was stored."""

import dataclasses
import http.client
import json

import pytest
from sqlmodel import func, select

from models import db
from models.conversation import Thread, Turn
from ops.errors import OpError
from ops.limits import MAX_BODY_BYTES, MAX_METADATA_BYTES, MAX_METADATA_DEPTH
from tests.support.calls import append, enable_logging

NS = "hostile"
APPEND = {"namespace": NS, "thread_id": "t", "role": "user", "content": "hello"}


@pytest.fixture(scope="module", autouse=True)
def recording():
    enable_logging(NS)
    append(NS, "t", "stored before any attack", msg_id="keep", metadata={"kept": [1, "two"]})
    with db.session() as s:
        kept = s.exec(select(Turn).where(Turn.msg_id == "keep")).one().model_dump()
    yield kept
    with db.session() as s:  # after every attack of the module, in whatever order they ran
        assert s.exec(select(Turn).where(Turn.msg_id == "keep")).one().model_dump() == kept


def turns() -> int:
    with db.session() as s:
        return s.exec(select(func.count()).select_from(Turn)).one()


def nested(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


RAW_BODIES = {
    "huge integer": ('{"namespace": "hostile", "thread_id": "t", "role": "user", "content": "x", '
                     '"metadata": {"n": ' + "9" * 5000 + "}}", "metadata"),
    "huge integer at the top": ('{"tokens": ' + "1" * 4400 + "}", "tokens"),
    "deep nesting": ('{"namespace": "hostile", "thread_id": "t", "role": "user", "content": "x", '
                     '"metadata": ' + nested(5000) + "}", "metadata"),
    "metadata 900 deep": ('{"namespace": "hostile", "thread_id": "t", "role": "user", "content": "x", '
                          '"metadata": ' + nested(900) + "}", "metadata"),
    "NaN": ('{"namespace": "hostile", "thread_id": "t", "role": "user", "content": "x", '
            '"metadata": {"v": NaN}}', "metadata"),
    "Infinity": ('{"namespace": "hostile", "thread_id": "t", "role": "user", "content": "x", '
                 '"metadata": {"v": -Infinity}}', "metadata"),
    "float overflowing to infinity": ('{"namespace": "hostile", "thread_id": "t", "role": "user", '
                                      '"content": "x", "metadata": {"v": 1e400}}', "metadata"),
    "lone surrogate in a metadata key": ('{"namespace": "hostile", "thread_id": "t", "role": "user", '
                                         '"content": "x", "metadata": {"\\ud800": 1}}', "metadata"),
    "lone surrogate in a metadata value": ('{"namespace": "hostile", "thread_id": "t", "role": "user", '
                                           '"content": "x", "metadata": {"k": "a\\udfffb"}}', "metadata"),
    "lone surrogate in the content": ('{"namespace": "hostile", "thread_id": "t", "role": "user", '
                                      '"content": "x\\ud83d"}', "content"),
    "tokens past int4": ('{"namespace": "hostile", "thread_id": "t", "role": "user", "content": "x", '
                         '"tokens": 2147483648}', "tokens"),
}  # fmt: skip


@pytest.mark.parametrize("name", RAW_BODIES)
def test_malformed_values_are_a_4xx_naming_the_field_and_store_nothing(client, make_token, name):
    body, field = RAW_BODIES[name]
    before = turns()
    answer = client.post("/v1/conversation.append", content=body.encode(), headers=make_token(NS))
    assert 400 <= answer.status_code < 500, (name, answer.status_code, answer.text[:300])
    assert answer.json()["field"] == field and field in answer.json()["error"]
    assert turns() == before


@pytest.mark.parametrize(
    "raw",
    [
        b"c1700000000000000." + b"9" * 20,  # an id past the bigint range
        b"c" + b"9" * 30 + b".1",  # a time past any date
        b"c-5.1",
        b"t42",  # a cursor of an earlier build
        b"\xff\xfe",
    ],
)
def test_a_cursor_this_server_did_not_issue_is_a_422(client, make_token, raw):
    import base64

    cursor = base64.urlsafe_b64encode(raw).decode()
    answer = client.post(
        "/v1/conversation.list",
        json={"namespace": NS, "thread_id": "t", "cursor": cursor},
        headers=make_token(NS),
    )
    assert answer.status_code == 422 and answer.json()["field"] == "cursor"


# A GET route's query and path parameters: typed like an op's body, so a value that is no number,
# a number past its bound or a NUL byte is a 422 naming the parameter, never a 500.
QUERIES = {
    "a superscript two as the threads' limit": ("/api/threads?limit=%C2%B2", "limit"),
    "a superscript two as the search's limit": ("/api/threads/search?q=x&limit=%C2%B2", "limit"),
    "a 5,000-digit limit": ("/api/threads?limit=" + "9" * 5000, "limit"),
    "a 5,000-digit offset": ("/api/threads?offset=" + "9" * 5000, "offset"),
    "a NUL in the search": ("/api/threads/search?q=a%00b", "q"),
    "a NUL in the namespace": ("/api/threads?namespace=a%00b", "namespace"),
    "a NUL in a thread's id": ("/api/threads/T-%00", "thread_id"),
    "a superscript two as the sessions' limit": ("/looms/by-id/{loom}/sessions?limit=%C2%B2", "limit"),
    "a 5,000-digit sessions' limit": ("/looms/by-id/{loom}/sessions?limit=" + "9" * 5000, "limit"),
    "a NUL in the agent's name": ("/looms/by-id/{loom}/sessions?agent_name=a%00b", "agent_name"),
    "a loom id that is no uuid": ("/looms/by-id/not-a-uuid/sessions", "loom_id"),
    "an unknown sessions' parameter": ("/looms/by-id/{loom}/sessions?colour=red", "colour"),
}  # fmt: skip


def default_loom() -> str:
    from ops.caller import OPERATOR
    from ops.registry import call

    return call("looms.list", OPERATOR, {"namespace": NS})["looms"][0]["id"]


@pytest.mark.parametrize("name", QUERIES)
def test_a_malformed_query_or_path_parameter_is_a_422_naming_it(client, make_token, name):
    url, field = QUERIES[name]
    for token in (make_token(NS), make_token(role="admin", all_namespaces=True)):
        answer = client.get(url.format(loom=default_loom()), headers=token)
        assert answer.status_code == 422, (name, answer.status_code, answer.text[:300])
        assert answer.json()["field"] == field and field in answer.json()["error"], answer.json()
        assert set(answer.json()) == {"error", "field"}


def test_a_thread_written_to_a_malformed_namespace_is_a_422_naming_it(client, make_token):
    from loom.threads import Thread

    body = json.loads(Thread().model_dump_json())
    everywhere = make_token(role="admin", all_namespaces=True)
    for namespace in ("a%00b", "n" * 129):
        for answer in (
            client.post(f"/api/threads?namespace={namespace}", json=body, headers=everywhere),
            client.put(f"/api/threads/{body['id']}?namespace={namespace}", json=body, headers=everywhere),
        ):
            assert answer.status_code == 422 and answer.json()["field"] == "namespace", answer.text[:300]


def test_a_number_given_as_an_agents_name_is_that_name(client, make_token):
    from ops.caller import OPERATOR
    from ops.registry import call

    call("context.pack", OPERATOR, {"namespace": NS, "thread_id": "t", "agent": "42"})
    answer = client.get(f"/looms/by-id/{default_loom()}/sessions?agent_name=42", headers=make_token(NS))
    assert answer.status_code == 200, answer.text
    assert [session["agentName"] for session in answer.json()["sessions"]] == ["42"]


def test_metadata_over_its_size_or_depth_limit_is_a_422(client, make_token):
    too_big = {"k": "x" * MAX_METADATA_BYTES}
    too_many_keys = {f"k{i}": i for i in range(200_000)}
    too_deep: dict = {}
    inner = too_deep
    for _ in range(MAX_METADATA_DEPTH + 1):
        inner["a"] = {}
        inner = inner["a"]
    for metadata in (too_big, too_deep):
        for op, body in (
            ("conversation.append", {**APPEND, "metadata": metadata}),
            ("conversation.create", {"namespace": NS, "thread_id": "meta", "metadata": metadata}),
            ("conversation.update", {"namespace": NS, "thread_id": "t", "metadata": metadata}),
        ):
            answer = client.post(f"/v1/{op}", json=body, headers=make_token(NS))
            assert answer.status_code == 422 and answer.json()["field"] == "metadata", (op, answer.text[:200])
    answer = client.post(
        "/v1/conversation.append", json={**APPEND, "metadata": too_many_keys}, headers=make_token(NS)
    )
    assert answer.status_code in (413, 422)


def test_a_body_over_the_cap_is_a_413_before_it_is_read_whole(live_api, make_token):
    host, port = live_api.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    conn.putrequest("POST", "/v1/conversation.append")
    conn.putheader("Authorization", make_token(NS)["Authorization"])
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Content-Length", str(100 * 1024 * 1024))
    conn.endheaders()
    conn.send(b'{"content": "' + b"x" * 65536)  # a first slice of a 100 MB body, and no more
    answer = conn.getresponse()
    assert answer.status == 413 and str(MAX_BODY_BYTES) in json.loads(answer.read())["error"]
    conn.close()


def test_a_chunked_body_over_the_cap_is_a_413(live_api, make_token):
    import httpx

    def chunks():
        for _ in range(MAX_BODY_BYTES // 65536 + 2):
            yield b" " * 65536

    answer = httpx.post(
        f"{live_api}/v1/conversation.append", content=chunks(), headers=make_token(NS), timeout=30
    )
    assert answer.status_code == 413 and answer.json()["error"]


def test_no_error_breaks_the_keep_alive_connection(live_api, make_token):
    """One connection: a bad body of every kind, each followed by a good request on it."""
    host, port = live_api.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    headers = {**make_token(NS), "Content-Type": "application/json"}
    good = json.dumps({"namespace": NS, "thread_id": "t", "include_messages": False})
    for body, _ in RAW_BODIES.values():
        conn.request("POST", "/v1/conversation.append", body=body.encode(), headers=headers)
        bad = conn.getresponse()
        assert 400 <= bad.status < 500 and json.loads(bad.read())["error"]
        conn.request("POST", "/v1/conversation.get", body=good, headers=headers)
        answer = conn.getresponse()
        assert answer.status == 200 and json.loads(answer.read())["thread_id"] == "t"
    conn.close()


def test_an_unexpected_error_is_a_json_500_and_the_connection_survives(live_api, make_token, monkeypatch):
    from ops import registry

    def boom(caller, req):
        raise RuntimeError("an internal detail that must not leak")

    get = registry.OPS["conversation.get"]
    monkeypatch.setitem(registry.OPS, "conversation.get", dataclasses.replace(get, handler=boom))
    host, port = live_api.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    headers = {**make_token(NS), "Content-Type": "application/json"}
    conn.request("POST", "/v1/conversation.get", body=json.dumps({"thread_id": "t"}), headers=headers)
    answer = conn.getresponse()
    body = json.loads(answer.read())
    assert answer.status == 500 and body["error"] and "internal detail" not in body["error"]
    conn.request("POST", "/v1/conversation.list", body=json.dumps({"thread_id": "t"}), headers=headers)
    after = conn.getresponse()
    assert after.status == 200 and json.loads(after.read())["thread_id"] == "t"
    conn.close()


@pytest.mark.parametrize("namespace", ["", "n" * 129, " padded", "tab\there", "nul\x00"])
def test_one_namespace_rule_for_tokens_and_ops(namespace):
    from ops.caller import OPERATOR, create_token
    from ops.registry import call

    with pytest.raises(OpError) as minted:
        create_token([namespace], "writer")
    assert minted.value.status == 422 and minted.value.field == "namespace"
    with pytest.raises(OpError) as called:
        call("conversation.append", OPERATOR, {**APPEND, "namespace": namespace})
    assert called.value.status == 422 and called.value.field == "namespace"


def test_update_while_recording_is_off_keeps_nothing(client, make_token):
    enable_logging("paused")
    append("paused", "t", "before the pause")
    with db.session() as s:
        before = s.exec(select(Thread).where(Thread.namespace == "paused")).one()
    enable_logging("paused", False)
    answer = client.post(
        "/v1/conversation.update",
        json={"namespace": "paused", "thread_id": "t", "title": "Secret plan", "metadata": {"x": 1}},
        headers=make_token("paused"),
    )
    assert answer.status_code == 200
    assert (answer.json()["stored"], answer.json()["reason"]) == (False, "logging_disabled")
    with db.session() as s:
        after = s.exec(select(Thread).where(Thread.namespace == "paused")).one()
    assert (after.title, after.meta) == (before.title, before.meta)


def test_nothing_stored_before_the_attacks_changed(client, make_token, recording):
    with db.session() as s:
        assert s.exec(select(Turn).where(Turn.msg_id == "keep")).one().model_dump() == recording


def test_metadata_at_its_depth_limit_is_stored(client, make_token):
    metadata: dict = {}
    inner = metadata
    for _ in range(MAX_METADATA_DEPTH - 1):  # metadata itself is the first level
        inner["a"] = {}
        inner = inner["a"]
    answer = client.post(
        "/v1/conversation.append",
        json={**APPEND, "content": "deep but allowed", "metadata": metadata},
        headers=make_token(NS),
    )
    assert answer.status_code == 200 and answer.json()["stored"] is True


def test_an_unreachable_database_is_a_503_with_retry_after(client, make_token, monkeypatch):
    from services.ports import free_port

    headers = make_token(NS)  # minted while the database answers
    client.post("/v1/conversation.get", json={"thread_id": "t"}, headers=headers)  # token cached
    working = db.url()
    db.configure(f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/loom")
    try:
        for op, body in (("append", APPEND), ("get", {"thread_id": "t"}), ("search", {"query": "x"})):
            answer = client.post(f"/v1/conversation.{op}", json=body, headers=headers)
            assert answer.status_code == 503, (op, answer.text)
            assert answer.headers["retry-after"].isdigit() and "database" in answer.json()["error"]
    finally:
        db.configure(working)


def test_a_token_minted_before_the_rule_with_an_overlong_namespace_gets_a_422(client):
    from models.namespace import ApiToken
    from ops.caller import token_hash

    with db.session() as s:
        s.add(ApiToken(token_hash=token_hash("loom_legacy"), role="writer", namespaces=["n" * 200]))
    body = {k: v for k, v in APPEND.items() if k != "namespace"}
    answer = client.post(
        "/v1/conversation.append", json=body, headers={"Authorization": "Bearer loom_legacy"}
    )
    assert answer.status_code == 422 and answer.json()["field"] == "namespace"


def test_a_statement_the_database_refuses_is_no_outage():
    from psycopg import errors
    from sqlalchemy import exc

    for refused in (errors.QueryCanceled(), errors.DeadlockDetected(), errors.DiskFull()):
        assert not db.unavailable(refused)
        assert not db.unavailable(exc.OperationalError("SELECT 1", {}, refused))
    for gone in (errors.AdminShutdown(), errors.CannotConnectNow(), errors.ConnectionException()):
        assert db.unavailable(gone) and db.unavailable(exc.OperationalError("SELECT 1", {}, gone))


@pytest.mark.parametrize(
    "args",
    [
        ["runs", "show", str(2**63)],
        ["runs", "show", "0"],
        ["runs", "retry", str(10**20)],
        ["runs", "list", "--limit", "-5"],
        ["runs", "list", "--limit", "100000000"],
        ["worker", "--threads", "0"],
        ["tokens", "create", "--namespace", ""],
        ["tokens", "create", "--namespace", "n" * 129],
        ["search", "n" * 129, "query"],
    ],
    ids=" ".join,
)
def test_the_cli_answers_out_of_range_input_with_one_line_and_exit_2(args):
    from typer.testing import CliRunner

    import cli

    result = CliRunner().invoke(cli.app, args)
    assert result.exit_code == 2 and result.stdout == "", result.output
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: ")
