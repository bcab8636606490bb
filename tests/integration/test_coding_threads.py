"""/api/threads on the real app, database and workers: upsert with optimistic locking (a stale
version is a 409 carrying the latest thread), ownership and visibility, bad input as 4xx naming the
field, the caller's listing, full-text and git search, and the indexing stage turning messages
into conversation turns, once."""

import json
import uuid

import pytest
from loom.threads import MessageSnapshot, Thread
from sqlalchemy import text

from models import db
from ops import coding_threads
from ops.caller import OPERATOR
from ops.registry import call
from pipelines import coding_threads as coding_search
from pipelines import thread_index as thread_indexing
from schedules.titling import title_untitled
from tests.integration.test_answer_shapes import shape
from tests.support.calls import enable_logging
from tests.support.waits import settled, wait_until
from workers.stages import thread_index


@pytest.fixture
def ns(database) -> str:
    return f"coding-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def tokens(ns, make_token) -> dict:
    return {
        "ana": make_token(ns, role="writer", read_scope="own_user", read_user_id="ana"),
        "bob": make_token(ns, role="writer", read_scope="own_user", read_user_id="bob"),
        "team": make_token(ns, role="writer"),
        "stranger": make_token(f"{ns}-other", role="writer"),
    }


def a_thread(title: str, *said: str, **fields) -> dict:
    thread = Thread(**fields)
    thread.metadata.title = title
    thread.conversation.messages = [
        MessageSnapshot(role="user" if i % 2 == 0 else "assistant", content=text)
        for i, text in enumerate(said)
    ]
    return json.loads(thread.model_dump_json())


def test_upsert_versions_and_a_stale_version_is_a_409_with_the_latest(client, tokens):
    body = a_thread("Add authentication to API", "add error handling to login")
    created = client.post("/api/threads", json=body, headers=tokens["ana"])
    assert created.status_code == 200 and created.json()["version"] == 1, created.text
    assert client.get(f"/api/threads/{body['id']}", headers=tokens["ana"]).json() == created.json()
    edited = {**created.json(), "metadata": {"title": "Auth, edited", "tags": []}}
    second = client.put(f"/api/threads/{body['id']}", json=edited, headers=tokens["ana"])
    assert second.status_code == 200 and second.json()["version"] == 2
    stale = client.put(f"/api/threads/{body['id']}", json={**edited, "version": 1}, headers=tokens["ana"])
    assert stale.status_code == 409 and stale.json()["thread"]["version"] == 2
    assert stale.json()["thread"]["metadata"]["title"] == "Auth, edited"


def test_only_the_owner_writes_and_visibility_decides_who_reads(client, tokens):
    body = a_thread("ana's session", "hello")
    assert client.post("/api/threads", json=body, headers=tokens["ana"]).status_code == 200
    path = f"/api/threads/{body['id']}"
    taken = client.put(path, json={**body, "version": 1}, headers=tokens["bob"])
    assert taken.status_code == 403
    assert client.get(path, headers=tokens["bob"]).status_code == 200  # organization, the default
    assert client.get(path, headers=tokens["stranger"]).status_code == 404
    for visibility, bob, stranger in (("private", 404, 404), ("public", 200, 200)):
        latest = client.get(path, headers=tokens["ana"]).json()
        changed = client.put(path, json={**latest, "visibility": visibility}, headers=tokens["ana"])
        assert changed.status_code == 200, changed.text
        assert client.get(path, headers=tokens["bob"]).status_code == bob, visibility
        assert client.get(path, headers=tokens["stranger"]).status_code == stranger, visibility
    assert client.get(path, headers={"Authorization": "Bearer nope"}).status_code == 401


def test_a_namespace_wide_token_with_a_user_id_owns_as_that_user_and_reads_unbounded(client, ns, make_token):
    cy = make_token(ns, role="writer", user_id="cy")
    team = make_token(ns, role="writer")
    body = a_thread("cy's session", "hello")
    assert client.post("/api/threads", json=body, headers=cy).status_code == 200
    path = f"/api/threads/{body['id']}"
    assert client.put(path, json={**body, "version": 1}, headers=team).status_code == 403
    assert [t["owner"] for t in client.get("/api/threads", headers=cy).json()["threads"]] == ["cy"]
    assert client.get("/api/threads", headers=team).json()["threads"] == []
    latest = client.get(path, headers=cy).json()
    assert client.put(path, json={**latest, "visibility": "private"}, headers=cy).status_code == 200
    assert client.get(path, headers=team).status_code == 404
    # The user id names whom the token speaks for; it bounds none of its reads.
    listed = client.post("/v1/conversation.threads", json={"namespace": ns}, headers=cy)
    assert listed.status_code == 200, listed.text
    saved = client.post(
        "/v1/conversation.list_saved_messages", json={"namespace": ns, "user_id": "dee"}, headers=cy
    )
    assert saved.status_code == 200, saved.text


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"id": "T-123"}, "id"),
        ({"visibility": "everyone"}, "visibility"),
        ({"agent_state": {"kind": "sleeping"}}, "agent_state"),
        ({"is_private": True}, "is_private"),
        ({"metadata": {"title": "nul \u0000 byte", "tags": []}}, "metadata"),
    ],
)
def test_bad_threads_are_4xx_naming_the_field_and_write_nothing(client, tokens, change, field):
    body = {**a_thread("bad", "x"), **change}
    refused = client.post("/api/threads", json=body, headers=tokens["ana"])
    assert refused.status_code == 422 and refused.json()["field"].startswith(field), refused.text
    with db.session() as s:
        assert not s.execute(text("SELECT 1 FROM coding_threads WHERE id = :id"), {"id": body["id"]}).first()


def test_a_thread_over_the_cap_is_a_413_and_a_path_naming_another_thread_a_422(client, tokens, monkeypatch):
    body = a_thread("big", "x" * 5_000)
    monkeypatch.setattr(coding_threads, "MAX_BYTES", 4_000)
    assert client.post("/api/threads", json=body, headers=tokens["ana"]).status_code == 413
    monkeypatch.undo()
    other = client.put(f"/api/threads/{Thread().id}", json=body, headers=tokens["ana"])
    assert other.status_code == 422 and other.json()["field"] == "id"


def test_the_listing_is_the_callers_own_newest_first(client, tokens):
    mine = [a_thread(f"mine {i}", "x") for i in range(3)]
    for body in mine:
        client.post("/api/threads", json=body, headers=tokens["ana"])
    client.post("/api/threads", json=a_thread("bob's", "y"), headers=tokens["bob"])
    listed = client.get("/api/threads?limit=2", headers=tokens["ana"]).json()["threads"]
    assert [t["title"] for t in listed] == ["mine 2", "mine 1"]
    rest = client.get("/api/threads?limit=2&offset=2", headers=tokens["ana"]).json()["threads"]
    assert [t["title"] for t in rest] == ["mine 0"]
    assert client.get("/api/threads?limit=0", headers=tokens["ana"]).status_code == 422


def test_search_by_words_branch_remote_and_commit_prefix_never_anothers_private(client, tokens):
    auth = a_thread(
        "Add authentication to API",
        "the login redirect loops forever",
        git_branch="feature/auth",
        git_remote_url="github.com/acme/api",
        git_commits=["a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"],
    )
    other = a_thread("Speed up search", "add the GIN index")
    hidden = {**a_thread("bob's private redirect notes", "redirect"), "visibility": "private"}
    client.post("/api/threads", json=auth, headers=tokens["ana"])
    client.post("/api/threads", json=other, headers=tokens["ana"])
    client.post("/api/threads", json=hidden, headers=tokens["bob"])

    def found(q: str, who: str = "ana") -> list[str]:
        answer = client.get("/api/threads/search", params={"q": q, "limit": 20}, headers=tokens[who])
        assert answer.status_code == 200, answer.text
        return [t["id"] for t in answer.json()["threads"]]

    for query in ("login redirect", "feature/auth", "github.com/acme/api", "a1b2c3d", "authentication"):
        assert found(query) == [auth["id"]], query
    assert set(found("redirect", who="bob")) == {auth["id"], hidden["id"]}  # bob reads his own
    assert hidden["id"] not in found("redirect")  # bob's private thread: not for ana
    assert client.get("/api/threads/search?q=", headers=tokens["ana"]).status_code == 422


def test_search_ranks_the_most_recent_matches_the_caller_may_read(client, tokens, monkeypatch):
    """Ranking reads each match's whole text, so only the newest RANK_POOL matches are ranked; the
    pool is drawn from what the caller may read, so others' private threads never crowd it."""
    monkeypatch.setattr(coding_search, "RANK_POOL", 2)
    best = a_thread("deadlock deadlock", "deadlock in the ledger, deadlock again")  # oldest
    client.post("/api/threads", json=best, headers=tokens["ana"])
    newer = [a_thread(f"newer {i}", "a deadlock once") for i in range(2)]
    for body in newer:
        client.post("/api/threads", json=body, headers=tokens["ana"])
    for i in range(3):  # newest of all, bob's own
        hidden = {**a_thread(f"bob {i}", "deadlock deadlock deadlock"), "visibility": "private"}
        client.post("/api/threads", json=hidden, headers=tokens["bob"])

    def found(who: str) -> list[str]:
        answer = client.get("/api/threads/search", params={"q": "deadlock"}, headers=tokens[who])
        return [t["title"] for t in answer.json()["threads"]]

    assert sorted(found("ana")) == ["newer 0", "newer 1"]
    monkeypatch.setattr(coding_search, "RANK_POOL", 500)
    assert found("ana")[0] == "deadlock deadlock" and len(found("ana")) == 3


def test_the_listing_and_the_search_answer_the_shape_clients_have_always_read(client, tokens):
    """Their keys and their values' kinds, moments written as isoformat writes them (as
    ``answer_shapes.json`` holds the ops'); a thread of the namespace itself has no owner."""
    ana = a_thread("Fix login", "it flakes", git_branch="fix")
    client.post("/api/threads", json=ana, headers=tokens["ana"])
    client.post("/api/threads", json=a_thread("Team login", "ours"), headers=tokens["team"])
    listed = client.get("/api/threads", headers=tokens["ana"]).json()
    found = client.get("/api/threads/search", params={"q": "flakes"}, headers=tokens["ana"]).json()
    item = {
        "id": "str",
        "version": "int",
        "title": "str",
        "message_count": "int",
        "last_activity_at": "moment+00:00",
        "git_branch": "str",
        "git_remote_url": None,
        "git_current_commit_sha": None,
        "visibility": "str",
        "owner": "str",
    }
    assert shape(listed) == {"threads": [item], "limit": "int", "offset": "int"}
    assert shape(found) == {"threads": [item | {"rank": "float"}]}
    team = client.get("/api/threads", headers=tokens["team"]).json()["threads"]
    assert [(t["title"], t["owner"]) for t in team] == [("Team login", None)]


def test_new_messages_become_conversation_turns_once(client, tokens, ns, worker):
    enable_logging(ns)
    body = a_thread("Ledger move", "move the invoices to the new ledger", "moving them now")
    body["conversation"]["messages"].append(
        {"role": "tool", "tool_call_id": "c1", "tool_name": "bash", "content": "tool output is not embedded"}
    )
    first = client.post("/api/threads", json=body, headers=tokens["team"]).json()
    wait_until(settled, what="the thread's indexing and embedding")
    second = {
        **first,
        "conversation": {
            "messages": [
                *first["conversation"]["messages"],
                {"role": "user", "content": "and the export job"},
            ]
        },
    }
    client.put(f"/api/threads/{body['id']}", json=second, headers=tokens["team"])
    wait_until(settled, what="the new message's indexing")

    def turns() -> list[tuple[str, str]]:
        listed = call(
            "conversation.list",
            OPERATOR,
            {"namespace": ns, "thread_id": body["id"], "agent": thread_indexing.AGENT},
        )
        return [(m["msg_id"], m["content"]) for m in listed["messages"]]

    assert turns() == [
        ("0", "move the invoices to the new ledger"),
        ("1", "moving them now"),
        ("3", "and the export job"),
    ]
    hits = call("conversation.search", OPERATOR, {"namespace": ns, "query": "invoices ledger", "limit": 5})[
        "hits"
    ]
    assert hits and hits[0]["thread_id"] == body["id"]
    # The run delivered again writes nothing twice.
    with db.session() as s:
        run_id = s.execute(
            text("SELECT id FROM stage_runs WHERE stage = 'thread_index' ORDER BY id DESC LIMIT 1")
        ).scalar_one()
        s.execute(text("UPDATE stage_runs SET status = 'pending' WHERE id = :id"), {"id": run_id})
        s.execute(text("UPDATE coding_threads SET indexed_count = 0 WHERE id = :id"), {"id": body["id"]})
    thread_index.index([run_id])
    assert len(turns()) == 3


def test_erasure_takes_a_persons_threads_and_a_namespaces_all(client, tokens, ns, worker):
    client.post("/api/threads", json=a_thread("ana's", "x"), headers=tokens["ana"])
    client.post("/api/threads", json=a_thread("the team's", "y"), headers=tokens["team"])
    by_user = call("erasure.request", OPERATOR, {"namespace": ns, "user_id": "ana", "wait": True})["run"]
    assert by_user["result"]["coding_threads"] == 1, by_user
    assert client.get("/api/threads", headers=tokens["ana"]).json()["threads"] == []
    whole = call("erasure.request", OPERATOR, {"namespaces": [ns], "wait": True})["run"]
    assert whole["result"]["coding_threads"] == 1
    assert client.get("/api/threads", headers=tokens["team"]).json()["threads"] == []


def test_the_thread_schema_is_published(client):
    schema = client.get("/api/threads/schema").json()
    assert schema["title"] == "Thread" and schema["properties"]["id"]["pattern"].startswith("^T-")
    assert set(schema["$defs"]["AgentStateKind"]["enum"]) >= {"waiting_for_user_input", "shutting_down"}


def test_the_conversation_copy_keeps_the_title_its_client_set(client, tokens, ns, llm, worker):
    enable_logging(ns)
    said = ["rotate the staging credentials", "with the vault cli", "and restart the app", "it reloads alone"]
    body = a_thread("Rotate staging credentials", *said)
    first = client.post("/api/threads", json=body, headers=tokens["team"]).json()
    wait_until(settled, what="the thread's indexing")

    def copy_title() -> str | None:
        with db.session() as s:
            return s.execute(
                text("SELECT title FROM threads WHERE namespace = :ns AND thread_id = :id"),
                {"ns": ns, "id": body["id"]},
            ).scalar_one()

    assert copy_title() == "Rotate staging credentials"
    sent = title_untitled()
    with db.session() as s:  # none of the titler's runs is for this thread's copy
        subjects = s.execute(
            text("SELECT subject FROM stage_runs WHERE id = ANY(:ids)"), {"ids": sent}
        ).scalars()
        copy_row = s.execute(
            text("SELECT id FROM threads WHERE namespace = :ns AND thread_id = :id"),
            {"ns": ns, "id": body["id"]},
        ).scalar_one()
        assert f"thread:{copy_row}" not in set(subjects)
    wait_until(settled, what="any title run")
    assert copy_title() == "Rotate staging credentials"
    renamed = {**first, "metadata": {**first["metadata"], "title": "Vault lease rotation"}}
    renamed["conversation"]["messages"].append({"role": "user", "content": "done, thanks"})
    assert client.put(f"/api/threads/{body['id']}", json=renamed, headers=tokens["team"]).status_code == 200
    wait_until(settled, what="the new message's indexing")
    assert copy_title() == "Vault lease rotation"
    latest = client.get(f"/api/threads/{body['id']}", headers=tokens["team"]).json()
    retitled = {**latest, "metadata": {**latest["metadata"], "title": "Vault leases"}}  # no new message
    assert client.put(f"/api/threads/{body['id']}", json=retitled, headers=tokens["team"]).status_code == 200
    assert copy_title() == "Vault leases"
