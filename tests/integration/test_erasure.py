"""erasure.request and erasure.export against the real database, broker and worker: a person's
data in a namespace, or whole namespaces (tombstoned, or removed with purge), erased by a stage
run in bounded batches that a failure midway does not double; afterwards no read, search or
listing returns it. The export streams a person's turns (tombstoned ones unless asked not to,
never embedding rows). Every request and export is in the append-only erasure log."""

import json

import pytest
from sqlalchemy import text
from sqlmodel import func, select
from typer.testing import CliRunner

import cli
from models import db
from models.conversation import Embedding, Thread, Turn, TurnKey
from models.erasure import ErasureEvent
from models.stage_run import SUCCEEDED
from models.transcript import Transcript
from ops.caller import OPERATOR
from ops.errors import OpError
from ops.registry import call
from pipelines import erasure as erasure_pipeline
from tests.support.calls import append, enable_logging, found_lexically
from tests.support.rows import context_of, lexemes_of
from tests.support.waits import settled, wait_until
from workers import ledger
from workers.stages import erasure as stage

NS, GONE, PURGED = "erasure", "erasure-gone", "erasure-purged"
ALICE = ["my new flat is on Rosenweg street", "the landlord wants the deposit by friday"]
BOB = ["the build broke on the arm runners", "pin the toolchain to the last good version"]


def setup_module():
    for namespace in (NS, GONE, PURGED):
        enable_logging(namespace)


def erase(**body) -> dict:
    return call("erasure.request", OPERATOR, {"wait": True, **body})


def count(model, *where) -> int:
    with db.session() as s:
        return s.exec(select(func.count()).select_from(model).where(*where)).one()


def hits(namespace: str, query: str) -> list[str]:
    answer = call("conversation.search", OPERATOR, {"namespace": namespace, "query": query, "limit": 20})
    return [hit["msg_id"] for hit in answer["hits"]]


def conversation(namespace: str, thread: str, turns: list[tuple[str, str]]) -> None:
    for i, (user, content) in enumerate(turns):
        append(namespace, thread, content, user_id=user, msg_id=f"{thread}-{user}-{i}")


def test_erasure_by_user_leaves_nothing_of_them_in_any_read_search_or_listing(worker):
    conversation(NS, "flat", [("alice", ALICE[0]), ("bob", BOB[0]), ("alice", ALICE[1])])
    conversation(NS, "build", [("bob", BOB[1])])
    call(
        "conversation.update",
        OPERATOR,
        {"namespace": NS, "thread_id": "flat", "title": "Alice's flat on Rosenweg"},
    )
    wait_until(settled, what="the embeddings")
    assert {m for m in hits(NS, "the deposit for the flat") if "alice" in m}

    answer = erase(namespace=NS, user_id="alice")
    run = answer["run"]
    assert run["status"] == SUCCEEDED and run["result"] == {"turns": 2, "embeddings": 2}, run

    got = call("conversation.get", OPERATOR, {"namespace": NS, "thread_id": "flat", "include_messages": True})
    assert [m["content"] for m in got["messages"]] == [BOB[0]] and got["title"] is None
    listed = call("conversation.list", OPERATOR, {"namespace": NS, "thread_id": "flat"})
    assert [m["user_id"] for m in listed["messages"]] == ["bob"]
    threads = call("conversation.threads", OPERATOR, {"namespace": NS})["threads"]
    (flat,) = [t for t in threads if t["thread_id"] == "flat"]
    assert flat["last_turn"]["excerpt"] == BOB[0] and flat["title"] is None
    assert not [m for m in hits(NS, "the deposit for the flat") if "alice" in m]
    assert not [m for m in hits(NS, "Rosenweg") if "alice" in m]  # neither leg
    # Tombstoned, not removed: the rows are there for the export, and embedding rows keep a tombstone.
    assert count(Turn, Turn.namespace == NS, Turn.user_id == "alice", Turn.deleted_at.is_not(None)) == 2
    assert (
        count(
            Embedding, Embedding.namespace == NS, Embedding.user_id == "alice", Embedding.deleted_at.is_(None)
        )
        == 0
    )

    with db.session() as s:
        events = s.exec(select(ErasureEvent).where(ErasureEvent.erasure_id == answer["erasure_id"])).all()
    assert [(e.event, e.actor, e.scope, e.rows) for e in events] == [
        ("requested", "operator", {"namespace": NS, "user_id": "alice"}, None),
        ("finished", "operator", {"namespace": NS, "user_id": "alice"}, {"turns": 2, "embeddings": 2}),
    ]


def test_no_turn_is_found_by_an_erased_persons_words_in_its_context(worker):
    """A turn after one of theirs held their words as context: rebuilt in the erasure's
    transaction from the live turn before theirs."""
    said = [
        ("dana", "Is the cabin by the fjord free in June?"),
        ("erik", "My sister lives on Tannenweg, near the ferry."),
        ("dana", "Then we can take the boat."),
    ]
    conversation(NS, "cabin", said)
    assert "cabin-dana-2" in found_lexically(NS, "Tannenweg ferry")
    assert erase(namespace=NS, user_id="erik")["run"]["status"] == SUCCEEDED
    assert found_lexically(NS, "Tannenweg ferry") == []
    assert context_of(NS, "cabin", "cabin-dana-2") == lexemes_of(said[0][1])


def test_the_export_streams_a_persons_turns_tombstoned_ones_unless_asked_not_to(
    client, make_token, worker, monkeypatch
):
    monkeypatch.setattr(erasure_pipeline, "EXPORT_FETCH", 50)
    for i in range(120):  # more than two fetches of the server-side cursor
        append(NS, "diary", f"carol's note {i}", user_id="carol", msg_id=f"carol-{i}")
    append(NS, "diary", "someone else's note", user_id="dave")
    erase(namespace=NS, user_id="carol")
    headers = make_token(NS, role="admin")
    with client.stream(
        "POST", "/v1/erasure.export", json={"namespace": NS, "user_id": "carol"}, headers=headers
    ) as r:
        assert r.status_code == 200 and r.headers["content-type"] == "application/json"
        chunks = list(r.iter_bytes())
    exported = json.loads(b"".join(chunks))
    assert exported["count"] == 120 and len(exported["turns"]) == 120
    assert {t["user_id"] for t in exported["turns"]} == {"carol"}
    assert all(t["deleted_at"] for t in exported["turns"]) and "vector" not in exported["turns"][0]
    live_only = client.post(
        "/v1/erasure.export",
        json={"namespace": NS, "user_id": "carol", "include_tombstoned": False},
        headers=headers,
    )
    assert live_only.json() == {
        "namespace": NS,
        "user_id": "carol",
        "include_tombstoned": False,
        "turns": [],
        "count": 0,
    }
    with db.session() as s:
        logged = s.exec(select(ErasureEvent).where(ErasureEvent.event == "exported")).all()
    assert [(e.actor.startswith("token "), e.rows) for e in logged[-2:]] == [
        (True, {"turns": 120, "complete": True}),
        (True, {"turns": 0, "complete": True}),
    ]


def test_a_namespace_list_is_tombstoned_or_with_purge_removed_and_the_log_stays(worker):
    for namespace in (GONE, PURGED):
        conversation(namespace, "t", [("erin", "the quarterly numbers are in the shared drive")])
        call(
            "conversation.ingest",
            OPERATOR,
            {"namespace": namespace, "thread_id": "i", "transcript": "# user\nhello there\n", "wait": True},
        )
    wait_until(settled, what="the embeddings")

    gone = erase(namespaces=[GONE])
    assert gone["run"]["status"] == SUCCEEDED, gone
    assert call("conversation.threads", OPERATOR, {"namespace": GONE})["threads"] == []
    assert hits(GONE, "quarterly numbers") == []
    assert (
        count(Turn, Turn.namespace == GONE) == 2
        and count(Turn, Turn.namespace == GONE, Turn.deleted_at.is_(None)) == 0
    )
    assert count(Transcript, Transcript.namespace == GONE) == 0  # raw text has no tombstone: it goes

    purged = erase(namespaces=[PURGED], purge=True)
    assert purged["run"]["status"] == SUCCEEDED, purged
    for model in (Turn, TurnKey, Embedding, Thread, Transcript):
        assert count(model, model.namespace == PURGED) == 0, model
    assert purged["run"]["result"]["turns"] == 2
    assert count(ErasureEvent, ErasureEvent.erasure_id == purged["erasure_id"]) == 2


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"namespace": NS}, "user_id"),
        ({"namespace": NS, "user_id": "u", "purge": True}, "purge"),
        ({"namespaces": [NS], "user_id": "u"}, "namespaces"),
        ({"namespaces": []}, "namespaces"),
        ({"namespaces": ["x"] * 101}, "namespaces"),
    ],
)
def test_a_request_without_one_clear_scope_is_a_422(body, field):
    with pytest.raises(OpError) as refused:
        call("erasure.request", OPERATOR, body)
    assert refused.value.status == 422 and refused.value.field == field


def test_only_an_admin_of_every_namespace_named_may_erase(client, make_token):
    body = {"namespaces": [NS, "someone-else"]}
    assert client.post("/v1/erasure.request", json=body, headers=make_token(NS)).status_code == 403
    writer = make_token(NS, role="writer")
    assert client.post("/v1/erasure.request", json={"user_id": "u"}, headers=writer).status_code == 403
    assert client.post("/v1/erasure.export", json={"user_id": "u"}, headers=writer).status_code == 403


def test_the_log_is_append_only(worker):
    erase(namespace=NS, user_id="nobody-at-all")
    for statement in (
        "UPDATE erasure_log SET actor = 'me'",
        "DELETE FROM erasure_log",
        "TRUNCATE erasure_log",
    ):
        with pytest.raises(Exception, match="erasure_log is append-only"), db.session() as s:
            s.execute(text(statement))


def test_a_run_that_fails_midway_is_finished_by_the_next_delivery_with_whole_counts(loom_env, monkeypatch):
    for i in range(7):
        append(NS, "many", f"frank's line {i}", user_id="frank", msg_id=f"frank-{i}")
    loom_env(LOOM_ERASURE_BATCH="2")
    answer = call("erasure.request", OPERATOR, {"namespace": NS, "user_id": "frank"})
    run_id = answer["run"]["id"]
    real, batches = stage._one_batch, []

    def dies_after_two(run, table, statement, params):
        if batches.count("turns") == 2:
            raise RuntimeError("the worker died")
        batches.append(table)
        return real(run, table, statement, params)

    monkeypatch.setattr(stage, "_one_batch", dies_after_two)
    stage.erase([run_id])  # released after two batches (4 turns tombstoned)
    assert count(Turn, Turn.user_id == "frank", Turn.deleted_at.is_(None)) == 3
    monkeypatch.setattr(stage, "_one_batch", real)
    with db.session() as s:
        s.execute(text("UPDATE stage_runs SET available_at = now() WHERE id = :id"), {"id": run_id})
    stage.erase([run_id])
    run = ledger.get(run_id)
    assert run.status == SUCCEEDED and run.result == {"turns": 7, "embeddings": 7}
    assert count(Turn, Turn.user_id == "frank", Turn.deleted_at.is_(None)) == 0
    assert (
        count(ErasureEvent, ErasureEvent.erasure_id == answer["erasure_id"], ErasureEvent.event == "finished")
        == 1
    )


def test_loom_erasure_list_shows_the_log(worker):
    erase(namespace=NS, user_id="gina")
    shown = CliRunner().invoke(cli.app, ["erasure", "list", "--limit", "2", "--json"])
    assert shown.exit_code == 0, shown.output
    events = [json.loads(line) for line in shown.output.splitlines() if line.strip()]
    assert [(e["event"], e["scope"]["user_id"]) for e in events] == [
        ("finished", "gina"),
        ("requested", "gina"),
    ]
    table = CliRunner().invoke(cli.app, ["erasure", "list", "--limit", "2"], terminal_width=200)
    assert table.exit_code == 0 and "finished" in table.output and "gina" in table.output


def test_the_log_is_listed_newest_first_to_an_admin_of_every_namespace_alone(client, make_token, worker):
    asked = erase(namespace=NS, user_id="kim")
    exported = client.post(
        "/v1/erasure.export", json={"namespace": NS, "user_id": "lee"}, headers=make_token(NS)
    )
    assert exported.status_code == 200
    for refused in (make_token(role="viewer", all_namespaces=True), make_token(NS, role="admin")):
        assert client.post("/v1/erasure.list", json={}, headers=refused).status_code == 403
    admin = make_token(role="admin", all_namespaces=True)
    listed = client.post("/v1/erasure.list", json={"limit": 3}, headers=admin)
    assert listed.status_code == 200
    events = listed.json()["events"]
    assert [(e["event"], e["erasure_id"], e["actor"]) for e in events] == [
        ("exported", None, events[0]["actor"]),
        ("finished", asked["erasure_id"], "operator"),
        ("requested", asked["erasure_id"], "operator"),
    ]
    assert events[0]["actor"].startswith("token ") and events[0]["rows"] == {"turns": 0, "complete": True}
    assert events[0]["scope"] == {"namespace": NS, "user_id": "lee", "include_tombstoned": True}
    assert events[2]["scope"] == {"namespace": NS, "user_id": "kim"} and events[2]["rows"] is None
    assert events[0]["id"] > events[1]["id"] > events[2]["id"] and all(e["at"] for e in events)
    assert client.post("/v1/erasure.list", json={"limit": 0}, headers=admin).status_code == 422


def test_a_summary_of_a_persons_turns_is_erased_with_them(llm, worker):
    turns = [
        ("hank", f"hank's private plan, part {i}") if i % 2 == 0 else ("ivy", f"ivy's reply {i}")
        for i in range(8)
    ]
    conversation(NS, "compacted", turns)
    wait_until(settled, what="the embeddings")
    body = {"namespace": NS, "thread_id": "compacted", "keep_recent": 2, "min_to_compact": 2, "wait": True}
    compacted = call("conversation.compact", OPERATOR, body)["run"]
    assert compacted["status"] == SUCCEEDED, compacted
    with db.session() as s:
        (summary,) = s.exec(
            select(Turn).where(
                Turn.thread_id == "compacted", Turn.role == "system", Turn.deleted_at.is_(None)
            )
        ).all()
    answer = erase(namespace=NS, user_id="hank")
    assert answer["run"]["result"]["summaries"] == 1
    got = call(
        "conversation.get", OPERATOR, {"namespace": NS, "thread_id": "compacted", "include_messages": True}
    )
    assert summary.msg_id not in [m["msg_id"] for m in got["messages"]]
    assert count(Embedding, Embedding.turn_id == summary.id, Embedding.deleted_at.is_(None)) == 0


@pytest.mark.parametrize("purge", [False, True], ids=["tombstone", "purge"])
def test_a_turn_written_while_a_namespace_is_erased_is_refused_or_keeps_its_key(purge, monkeypatch, worker):
    namespace = f"erasure-race-{purge}".lower()
    enable_logging(namespace)
    conversation(namespace, "busy", [("jo", "first words"), ("jo", "second words")])
    real, written = stage._one_batch, []

    def then_a_write(run, table, statement, params):
        done = real(run, table, statement, params)
        if table == "turns" and not written:  # an agent appends while the erasure goes on
            written.append(append(namespace, "busy", "said during the erasure", msg_id="late"))
        return done

    monkeypatch.setattr(stage, "_one_batch", then_a_write)
    assert erase(namespaces=[namespace], purge=purge)["run"]["status"] == SUCCEEDED
    (late,) = written
    assert (late["stored"], late["reason"]) == (False, "deleted")  # the threads were closed first
    with db.session() as s:
        keyless = s.exec(
            text(
                "SELECT count(*) FROM turns t WHERE t.namespace = :ns AND NOT EXISTS ("
                "SELECT FROM turn_keys k WHERE k.namespace = t.namespace AND k.thread_id = t.thread_id "
                "AND k.agent = t.agent AND k.msg_id = t.msg_id)"
            ),
            params={"ns": namespace},
        ).one()[0]
    assert keyless == 0
