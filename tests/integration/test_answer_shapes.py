"""What each op answers, as clients have always read it: the keys (an optional key left out stays
out, one set to null stays null), the kinds of the values, and moments written as
``datetime.isoformat`` writes them ("+00:00"). The shapes were recorded from the ops as they
answered before they returned their typed models (``answer_shapes.json``); a change that means to
alter an answer changes that file in the same commit."""

import json
import re
import uuid
from pathlib import Path

import pytest

from ops.caller import OPERATOR
from ops.registry import OPS, call
from tests.support.calls import append, enable_logging
from tests.support.waits import settled, wait_until

SHAPES = Path(__file__).with_name("answer_shapes.json")
MOMENT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(?P<offset>Z|[+-]\d\d:\d\d)?")


def shape(value: object) -> object:
    """The value with each leaf replaced by its kind; a moment by how its offset is written."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in sorted(value.items())}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    if isinstance(value, str) and (moment := MOMENT.fullmatch(value)):
        return f"moment{moment['offset'] or ''}"
    if value is None:
        return None
    return type(value).__name__


def succeeded(run_id: int) -> bool:
    from models import db
    from models.stage_run import SUCCEEDED, StageRun

    with db.session() as s:
        return s.get(StageRun, run_id).status == SUCCEEDED


@pytest.fixture
def answers(worker, llm) -> dict[str, object]:
    """One answer of every op (but the streamed export), on a namespace of its own."""
    ns = f"shapes-{uuid.uuid4().hex[:8]}"
    got: dict[str, object] = {}

    def op(name: str, body: dict, key: str | None = None) -> dict:
        answer = call(name, OPERATOR, body)
        got[key or name] = answer
        return answer

    op("conversation.set_logging", {"namespace": ns, "enabled": True})
    enable_logging(ns)
    op("conversation.create", {"namespace": ns, "thread_id": "t", "title": "Paris trip"})
    first = append(ns, "t", "We booked the hotel in Paris for May.", msg_id="m1")
    got["conversation.append"] = first
    op(
        "conversation.append",
        {"namespace": ns, "thread_id": "t", "role": "assistant", "content": "Noted."},
        "conversation.append+second",
    )
    wait_until(settled, what="the appends' runs")
    op("conversation.update", {"namespace": ns, "thread_id": "t", "title": "Paris in May"})
    op("conversation.threads", {"namespace": ns})
    op("conversation.get", {"namespace": ns, "thread_id": "t", "include_messages": True, "limit": 1})
    op("conversation.list", {"namespace": ns, "thread_id": "t", "limit": 1})
    op("conversation.search", {"namespace": ns, "query": "hotel in Paris"})
    op(
        "conversation.ingest",
        {"namespace": ns, "thread_id": "imported", "transcript": "# user\n\nhello\n", "wait": True},
    )
    saved = {"namespace": ns, "conversation_id": "t", "message_id": "m1", "user_id": "u"}
    op("conversation.save_message", saved)
    status = {key: value for key, value in saved.items() if key != "message_id"}
    op("conversation.saved_status", status | {"message_ids": ["m1"]})
    op("conversation.list_saved_messages", {"namespace": ns, "user_id": "u"})
    op("conversation.search_saved_messages", {"namespace": ns, "user_id": "u", "query": "hotel"})
    op("conversation.unsave_message", saved)
    compacting = op(
        "conversation.compact", {"namespace": ns, "thread_id": "t", "keep_recent": 1, "min_to_compact": 1}
    )
    # The session's subjects (context.pack) are the senders of the thread's live turns: the
    # compaction (after the saves: a saved message is a live one) must have hidden the user's
    # turn first, retries included.
    wait_until(lambda: succeeded(compacting["run"]["id"]), what="the compaction")
    loom = op("looms.create", {"namespace": ns, "name": "travel"})
    op("looms.list", {"namespace": ns})
    op("looms.update", {"namespace": ns, "weaving_mode": "Suggest"})
    op("looms.sessions", {"namespace": ns})
    memory = op("memory.set", {"namespace": ns, "thread_id": "t", "content": "The user likes small hotels."})
    thread = memory["thread"]["id"] if isinstance(memory.get("thread"), dict) else memory.get("id")
    wait_until(settled, what="the memory's embedding")  # memory.suggest then finds it by its vector
    op("memory.search", {"namespace": ns, "query": "hotels"})
    op("memory.inspect", {"namespace": ns})
    op("memory.pin", {"namespace": ns, "thread": thread})
    op("memory.reframe", {"namespace": ns, "thread": thread, "content": "The user prefers small hotels."})
    op("memory.give", {"namespace": ns, "thread_id": "t", "thread": thread, "to_agent": "planner"})
    wait_until(settled, what="the reframed memory's embedding")
    op("memory.suggest", {"namespace": ns, "thread_id": "t", "said": "which hotel again?"})
    op("memory.session_record", {"namespace": ns, "thread_id": "t3", "recalled": [thread]})
    op("memory.cut", {"namespace": ns, "thread": thread})
    op(
        "memory.set_from_messages",
        {"namespace": ns, "thread_id": "t", "messages": [{"role": "user", "content": "I live in Lyon."}]},
    )
    op("memory.recall", {"namespace": ns, "query": "Lyon"})
    block = {"namespace": ns, "user_id": "u", "project": "p", "branch": "b"}
    op("working_memory.set", block | {"content": "halfway through the login fix"})
    op("working_memory.get", block)
    op("working_memory.list", {"namespace": ns})
    op("context.pack", {"namespace": ns, "thread_id": "t"})
    op("context.pack", block | {"thread_id": "t2"}, "context.pack+working_memory")
    action = {
        "tool": "Bash",
        "input_sha256": "0" * 64,
        "summary": "pytest -q",
        "outcome": "error",
        "error": "1 failed",
    }
    op("observe.record", {"namespace": ns, "session_id": "s", "actions": [action]})
    op("observe.crystallize", {"namespace": ns, "session_id": "s"})
    op("observe.crystallize", {"namespace": ns, "session_id": "s"}, "observe.crystallize+nothing_new")
    brief = {"namespace": ns, "user_id": "u", "brief_key": "b", "project": "p"}
    op("session.brief_save", brief | {"events": [{"kind": "user", "text": "fix the login bug"}]})
    op("session.brief_get", brief)
    op("session.brief_list", {"namespace": ns, "user_id": "u"})
    op("session.brief_delete", {"namespace": ns, "user_id": "u", "brief_key": "b"})
    wait_until(settled, what="every run so far")  # the ledger's reads then see each run done
    op("namespaces.list", {})
    runs = op("runs.list", {"limit": 1})
    op("runs.get", {"run_id": runs["runs"][0]["id"]})
    op("runs.retry_stage", {"stage": "embedding"})
    op("passes.list", {})
    op("passes.run", {"name": "titler"})
    op("night_weaving.list", {"limit": 1})
    op("health.get", {})
    op("cursors.rotate_key", {})
    op("erasure.request", {"namespace": ns, "user_id": "nobody"})
    op("erasure.list", {"limit": 1})
    op("conversation.delete", {"namespace": ns, "thread_id": "imported", "confirm_thread_id": "imported"})
    assert loom
    return got


def test_every_op_answers_the_shape_clients_have_always_read(answers):
    recorded = json.loads(SHAPES.read_text())
    shapes = {name: shape(answer) for name, answer in sorted(answers.items())}
    if not recorded:  # pragma: no cover - recording, once
        SHAPES.write_text(json.dumps(shapes, indent=1, sort_keys=True) + "\n")
        pytest.fail("recorded the shapes: review answer_shapes.json and commit it")
    assert shapes == recorded
    untried = set(OPS) - {name.split("+")[0] for name in answers} - {"erasure.export", "runs.retry"}
    assert not untried, f"no recorded answer of {sorted(untried)}"


def test_an_answer_writes_its_moments_as_isoformat_with_the_utc_offset(client, make_token):
    ns = f"shapes-{uuid.uuid4().hex[:8]}"
    enable_logging(ns)
    append(ns, "t", "one")
    body = client.post(
        "/v1/conversation.get", json={"namespace": ns, "thread_id": "t"}, headers=make_token(ns)
    ).text
    moments = re.findall(r'"(?:created_at|last_turn_at)": ?"([^"]+)"', body)
    assert moments and all(m.endswith("+00:00") for m in moments), body
