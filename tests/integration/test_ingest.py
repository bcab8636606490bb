"""conversation.ingest: a whole transcript in one request, stored raw with one ingest run and
answered at once; the worker appends its turns through the write path of conversation.append, so
a second ingest (or a longer version of the same file) adds only what is new; a malformed one
fails its run naming the line and writes nothing; the body has its own cap."""

import json

import pytest
from sqlalchemy import text
from sqlmodel import select

from models import db
from models.conversation import Turn
from models.settings import get_settings
from models.stage_run import FAILED, SKIPPED, SUCCEEDED
from ops.caller import OPERATOR
from ops.errors import OpError
from ops.registry import call
from tests.support.calls import enable_logging
from tests.support.waits import settled, wait_until
from workers import ledger

NS = "ingesting"
SESSION = [
    {
        "role": "user",
        "content": "how do I rotate the staging database password",
        "ts": "2024-05-02T08:00:00Z",
    },
    {"role": "assistant", "content": "use the vault cli to issue a new lease", "ts": "2024-05-02T08:00:05Z"},
    {"role": "user", "content": "and the app picks it up", "ts": "2024-05-02T08:01:00Z"},
]


def setup_module():
    enable_logging(NS)


@pytest.fixture(autouse=True)
def settings_as_set():
    """A test that sets a LOOM_* variable leaves no settings read from it behind."""
    yield
    get_settings.cache_clear()


def ingest(thread: str, transcript: str, **extra) -> dict:
    body = {"namespace": NS, "thread_id": thread, "transcript": transcript, "wait": True, **extra}
    return call("conversation.ingest", OPERATOR, body)


def turns(thread: str) -> list[Turn]:
    with db.session() as s:
        return list(
            s.exec(select(Turn).where(Turn.namespace == NS, Turn.thread_id == thread).order_by(Turn.ts))
        )


def test_a_transcript_is_appended_whole_keeping_its_times_and_twice_adds_nothing(worker):
    answer = ingest("whole", json.dumps(SESSION), source="session.json")
    run = answer["run"]
    assert answer["stored"] and run["status"] == SUCCEEDED, run
    assert run["result"] == {"turns": 3, "done": 3, "stored": 3}
    stored = turns("whole")
    assert [t.content for t in stored] == [turn["content"] for turn in SESSION]
    assert stored[0].ts.isoformat() == "2024-05-02T08:00:00+00:00"
    wait_until(settled, what="the embeddings")
    body = {
        "namespace": NS,
        "thread_id": "whole",
        "query": "rotate the staging database password",
        "search_mode": "semantic",
    }
    hits = call("conversation.search", OPERATOR, body)  # other tests ingest the same session elsewhere
    assert hits["mode"] == "vector" and hits["hits"][0]["msg_id"].startswith("t00000-")
    again = ingest("whole", json.dumps(SESSION))
    assert (again["stored"], again["reason"]) == (False, "duplicate")
    assert again["run"]["id"] == run["id"]  # the same file for the same thread: the same run
    longer = ingest("whole", json.dumps([*SESSION, {"role": "assistant", "content": "yes, within a minute"}]))
    assert longer["run"]["result"] == {"turns": 4, "done": 4, "stored": 1, "duplicate": 3}
    assert len(turns("whole")) == 4


def test_markdown_is_ingested_too(worker):
    answer = ingest("md", "# user\nwhere do backups go\n\n# assistant\nto the cold bucket\n")
    assert answer["run"]["status"] == SUCCEEDED and [t.role for t in turns("md")] == ["user", "assistant"]


def test_a_malformed_transcript_fails_its_run_naming_the_line_and_writes_nothing(worker):
    broken = "# user\nfine\n\n# assistant\n\n# user\nagain\n"
    run = ingest("broken", broken, source="broken.md")["run"]
    assert (run["status"], run["reason"]) == (FAILED, "malformed")
    assert "broken.md line 4" in run["last_error"] and turns("broken") == []
    again = ingest("broken", broken, source="broken.md")  # handed over again: tried again, not a duplicate
    assert (again["stored"], again["reason"]) == (True, None)
    assert again["run"]["id"] == run["id"] and again["run"]["status"] == FAILED


def test_not_a_transcript_at_all_is_a_422_and_stores_nothing():
    with pytest.raises(OpError) as refused:
        ingest("prose", "just some prose, no headings")
    assert refused.value.status == 422 and refused.value.field == "transcript"
    with db.session() as s:
        assert s.exec(text("SELECT count(*) FROM transcripts WHERE thread_id = 'prose'")).scalar() == 0


def test_a_namespace_that_does_not_record_keeps_nothing():
    answer = call(
        "conversation.ingest",
        OPERATOR,
        {"namespace": "ingest-off", "thread_id": "t", "transcript": json.dumps(SESSION)},
    )
    assert (answer["stored"], answer["reason"]) == (False, "logging_disabled")


def test_over_the_turn_cap_the_run_fails_and_nothing_is_written(worker, monkeypatch):
    monkeypatch.setenv("LOOM_INGEST_MAX_TURNS", "2")
    get_settings.cache_clear()
    run = ingest("capped", json.dumps(SESSION))["run"]
    assert (run["status"], run["reason"]) == (FAILED, "too-many-turns") and turns("capped") == []


def test_the_body_cap_is_the_ingest_cap_not_the_ops_cap(client, make_token, monkeypatch):
    monkeypatch.setenv("LOOM_INGEST_MAX_BYTES", str(64 * 1024))
    get_settings.cache_clear()
    big = json.dumps([{"role": "user", "content": "x" * 70_000}])
    body = {"namespace": NS, "thread_id": "big", "transcript": big}
    answer = client.post("/v1/conversation.ingest", json=body, headers=make_token(NS))
    assert answer.status_code == 413 and str(64 * 1024) in answer.json()["error"]


def test_recording_switched_off_midway_stops_the_run(worker, monkeypatch):
    from pipelines import appending

    real = appending.write
    seen = []

    def switch_off_after_one(conn, turn):
        if seen:
            enable_logging(NS, False)
        seen.append(turn)
        return real(conn, turn)

    monkeypatch.setattr(appending, "write", switch_off_after_one)
    try:
        run = ingest("midway", json.dumps(SESSION))["run"]
    finally:
        enable_logging(NS)
    assert (run["status"], run["reason"]) == (SKIPPED, "logging_disabled")
    assert run["result"] == {"turns": 3, "done": 2, "stored": 1, "logging_disabled": 1}
    assert ledger.get(run["id"]).status == SKIPPED


def claude_entry(uuid: str, role: str, text: str, message_id: str | None = None, **blocks) -> str:
    content = [*blocks.get("thinking", []), {"type": "text", "text": text}] if text else blocks["thinking"]
    message = {"role": role, "content": content, "id": message_id or f"msg-{uuid}"}
    entry = {"type": role, "uuid": uuid, "timestamp": "2025-03-01T09:00:00Z", "message": message}
    return json.dumps(entry) + "\n"


def test_a_claude_code_session_file_in_pieces_adds_each_entry_once_with_its_reasoning(worker):
    thinking = [{"type": "thinking", "thinking": "check the retention docs"}]
    first = claude_entry("u-1", "user", "how long are turns kept") + claude_entry(
        "a-1", "assistant", "", "m1", thinking=thinking
    )
    second = claude_entry("a-2", "assistant", "forever unless a TTL is set", "m1")
    run = ingest("claude", first + second, source="s.jsonl")["run"]
    assert run["result"] == {"turns": 2, "done": 2, "stored": 2}
    stored = turns("claude")
    assert [(t.msg_id, t.reasoning) for t in stored] == [("u-1", None), ("a-2", "check the retention docs")]
    assert stored[0].ts.isoformat() == "2025-03-01T09:00:00+00:00"
    # The whole file again, grown by one entry: only the new entry is added.
    grown = ingest("claude", first + second + claude_entry("u-3", "user", "thanks"))["run"]
    assert grown["result"] == {"turns": 3, "done": 3, "stored": 1, "duplicate": 2}


def test_pieces_of_a_cursor_agent_transcript_keep_their_lines_and_the_same_lines_elsewhere_are_new(worker):
    line = json.dumps({"role": "user", "message": {"content": [{"type": "text", "text": "ok"}]}}) + "\n"
    one = ingest("cursor", line, first_line=1)["run"]
    again = ingest("cursor", line, first_line=7)  # the same words said again, further in the file
    assert again["stored"] and again["run"]["id"] != one["id"]
    assert [t.msg_id for t in turns("cursor")] == ["line1", "line7"]


def test_only_json_lines_come_in_pieces_a_422_otherwise():
    with pytest.raises(OpError) as refused:
        ingest("md-piece", "# user\nhi\n", first_line=3)
    assert refused.value.status == 422 and refused.value.field == "first_line"
