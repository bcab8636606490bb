"""The HTTP layer: bearer tokens, roles, namespaces, and 4xx with a reason for bad input."""

import pytest
from sqlmodel import func, select

from models import db
from models.conversation import Turn
from tests.support.calls import enable_logging


@pytest.fixture(scope="module", autouse=True)
def recording():
    enable_logging("a")
    enable_logging("b")


APPEND = {"namespace": "a", "thread_id": "t", "role": "user", "content": "hello"}


def turns() -> int:
    with db.session() as s:
        return s.exec(select(func.count()).select_from(Turn)).one()


def test_healthz_answers_once_database_and_broker_answer(client, make_token):
    answer = client.get("/healthz")
    assert answer.status_code == 200 and answer.json() == {"status": "ok"}  # details only to an admin
    detailed = client.get("/healthz", headers=make_token("a", role="admin"))
    assert detailed.json() == {"status": "ok", "database": "ok", "broker": "ok"}
    # An admin token bounded to one end user (or session) is an end user's: it is told the status.
    for bounds in ({"read_scope": "own_user", "read_user_id": "ana"}, {"read_scope": "own_session"}):
        bounded = client.get("/healthz", headers=make_token("a", role="admin", **bounds))
        assert bounded.json() == {"status": "ok"}, bounds


@pytest.mark.parametrize(
    "headers", [{}, {"Authorization": "Bearer loom_not-a-token"}, {"Authorization": "Basic x"}]
)
def test_a_call_without_a_known_token_is_401_and_writes_nothing(client, headers):
    before = turns()
    answer = client.post("/v1/conversation.append", json=APPEND, headers=headers)
    assert answer.status_code == 401 and answer.json()["error"]
    assert turns() == before


@pytest.mark.parametrize(
    ("role", "op", "body"),
    [
        ("viewer", "conversation.append", APPEND),
        ("writer", "conversation.set_logging", {"namespace": "a", "enabled": False}),
    ],
)
def test_a_role_below_the_ops_role_is_403_and_writes_nothing(client, make_token, role, op, body):
    before = turns()
    answer = client.post(f"/v1/{op}", json=body, headers=make_token("a", role=role))
    assert answer.status_code == 403 and "role" in answer.json()["error"]
    assert turns() == before
    allowed = client.post(
        "/v1/conversation.append",
        json={**APPEND, "content": f"after refusing {op}"},
        headers=make_token("a", role="writer"),
    )
    assert allowed.json()["stored"] is True  # the refused call switched nothing off


def test_a_namespace_the_token_does_not_cover_is_403(client, make_token):
    answer = client.post(
        "/v1/conversation.append", json={**APPEND, "namespace": "b"}, headers=make_token("a")
    )
    assert answer.status_code == 403 and "namespace" in answer.json()["error"]


def test_the_namespace_may_be_omitted_when_the_token_covers_exactly_one(client, make_token):
    body = {k: v for k, v in APPEND.items() if k != "namespace"} | {"content": "implicit namespace"}
    answer = client.post("/v1/conversation.append", json=body, headers=make_token("b", role="writer"))
    assert answer.status_code == 200 and answer.json()["namespace"] == "b"
    two = client.post("/v1/conversation.append", json=body, headers=make_token("a", "b"))
    assert two.status_code == 422 and two.json()["field"] == "namespace"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({**APPEND, "role": "robot"}, "role"),
        ({k: v for k, v in APPEND.items() if k != "content"}, "content"),
        ({**APPEND, "msg_id": "m" * 129}, "msg_id"),
        ({**APPEND, "content": "nul \x00 byte"}, "content"),
        ({**APPEND, "metadata": {"k": "nul \x00"}}, "metadata"),
        ({**APPEND, "tokens": -1}, "tokens"),
        ({**APPEND, "surprise": 1}, "surprise"),
    ],
)
def test_bad_input_is_a_422_naming_the_field_and_touches_nothing(client, make_token, body, field):
    before = turns()
    answer = client.post("/v1/conversation.append", json=body, headers=make_token("a"))
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == field and field in answer.json()["error"]
    assert turns() == before


def test_invalid_json_is_a_400_with_a_reason(client, make_token):
    answer = client.post("/v1/conversation.append", content=b'{"thread_id": ', headers=make_token("a"))
    assert answer.status_code == 400 and "JSON" in answer.json()["error"]


def test_a_body_that_is_not_an_object_is_a_422(client, make_token):
    answer = client.post("/v1/conversation.append", json=[1, 2], headers=make_token("a"))
    assert answer.status_code == 422 and "object" in answer.json()["error"]


def test_an_unknown_op_is_a_404_naming_it(client, make_token):
    answer = client.post("/v1/conversation.frobnicate", json={}, headers=make_token("a"))
    assert answer.status_code == 404 and "conversation.frobnicate" in answer.json()["error"]


def test_create_update_get_list_and_threads_answer_over_http(client, make_token):
    headers = make_token("a")

    def op(name: str, body: dict) -> dict:
        answer = client.post(f"/v1/conversation.{name}", json=body, headers=headers)
        assert answer.status_code == 200, answer.text
        return answer.json()

    assert op("create", {"thread_id": "made", "title": "Made up front", "run_id": "r0"})["stored"] is True
    assert op("create", {"thread_id": "made"})["reason"] == "exists"
    op("append", {"thread_id": "made", "role": "user", "content": "first", "run_id": "r1"})
    op("append", {"thread_id": "made", "role": "assistant", "content": "second", "run_id": "r2"})
    updated = op("update", {"thread_id": "made", "title": "Renamed", "metadata": {"x": 1}})
    assert (updated["title"], updated["metadata"], updated["run_id"]) == ("Renamed", {"x": 1}, "r0")
    got = op("get", {"thread_id": "made", "include_messages": True, "order": "desc", "limit": 1})
    assert [m["content"] for m in got["messages"]] == ["second"] and got["next_cursor"]
    tail = op(
        "get", {"thread_id": "made", "include_messages": True, "order": "desc", "cursor": got["next_cursor"]}
    )
    assert [m["content"] for m in tail["messages"]] == ["first"] and tail["next_cursor"] is None
    assert [m["content"] for m in op("list", {"thread_id": "made", "run_id": "r2"})["messages"]] == ["second"]
    assert "made" in [t["thread_id"] for t in op("threads", {})["threads"]]
    missing = client.post("/v1/conversation.get", json={"thread_id": "nope"}, headers=headers)
    assert missing.status_code == 404 and missing.json()["field"] == "thread_id"
    bad_cursor = client.post(
        "/v1/conversation.list", json={"thread_id": "made", "cursor": "zzz"}, headers=headers
    )
    assert bad_cursor.status_code == 422 and bad_cursor.json()["field"] == "cursor"
