"""observe.record and observe.crystallize on the real database, broker, workers and the local LLM
server: a tool action stored once however often a hook sends it, bounded input refused, a high one
kept but never in a prompt nor a memory, and a session's actions made into Episodic memory threads
with their evidence, by the model or, without one, by the deterministic builder."""

import hashlib
import uuid

import pytest
from sqlalchemy import text

from models import db
from models.stage_run import SUCCEEDED
from ops.caller import OPERATOR, authenticate, create_token
from ops.errors import OpError
from ops.registry import call
from tests.support.calls import enable_logging
from tests.support.waits import settled, wait_until
from workers import ledger, stages

KEY = "sk-proj-AbCdEf1234567890GhIjKlMnOpQrStUvWxYz12"
SECRET = f"the deploy key is {KEY} for OPS-7731"


@pytest.fixture
def ns(database) -> str:
    namespace = f"observe-{uuid.uuid4().hex[:8]}"
    enable_logging(namespace, enabled=False)  # observations need no transcript recorded
    return namespace


def op(ns: str, name: str, caller=OPERATOR, **body) -> dict:
    return call(name, caller, {"namespace": ns, **body})


def action(n: int, summary: str, outcome: str = "ok", files=(), error=None, tool="Bash") -> dict:
    return {
        "id": f"toolu_{n:04d}",
        "tool": tool,
        "input_sha256": hashlib.sha256(summary.encode()).hexdigest(),
        "summary": summary,
        "outcome": outcome,
        "files": list(files),
        "error": error,
        "ts": f"2026-11-30T10:{n:02d}:00Z",
    }


SESSION = [
    action(1, "src/ledger.py", files=["src/ledger.py"], tool="Read"),
    action(2, "src/ledger.py", files=["src/ledger.py"], tool="Edit"),
    action(3, "pytest -q tests/test_ledger.py", "error", error="AssertionError: totals differ\n  at line 40"),
    action(4, "src/export.py", files=["src/export.py"], tool="Edit"),
    action(5, "pytest -q tests/test_ledger.py"),
]


def test_an_action_sent_again_is_stored_once(ns):
    first = op(ns, "observe.record", session_id="s1", actions=SESSION[:3])
    assert (first["recorded"], first["repeated"], first["high"]) == (3, 0, 0)
    again = op(ns, "observe.record", session_id="s1", actions=SESSION)
    assert (again["recorded"], again["repeated"]) == (2, 3)
    unnamed = {k: v for k, v in SESSION[0].items() if k != "id"}
    assert op(ns, "observe.record", session_id="s1", actions=[unnamed])["recorded"] == 1
    assert op(ns, "observe.record", session_id="s1", actions=[unnamed])["repeated"] == 1
    # Another session's action of the same id is its own.
    assert op(ns, "observe.record", session_id="s2", actions=SESSION[:1])["recorded"] == 1


@pytest.mark.parametrize(
    "change",
    [
        {"input_sha256": "not-a-digest"},
        {"summary": "x" * 201},
        {"summary": "two\nlines"},
        {"summary": ""},
        {"files": ["f"] * 33},
        {"files": [""]},
        {"files": ["p" * 513]},
        {"error": "e" * 2_001},
        {"outcome": "maybe"},
        {"ts": "2026-11-30T10:00:00"},  # no time zone
    ],
)
def test_an_action_out_of_bounds_is_refused_and_nothing_of_its_batch_stored(ns, change):
    with pytest.raises(OpError) as caught:
        op(ns, "observe.record", session_id="s", actions=[SESSION[0], {**SESSION[1], **change}])
    assert caught.value.status == 422
    assert op(ns, "observe.record", session_id="s", actions=SESSION[:2])["recorded"] == 2


def test_a_batch_too_large_or_twice_the_same_action_is_refused(ns):
    for actions in ([action(i % 60, f"cmd {i}") | {"id": f"a{i}"} for i in range(201)], [SESSION[0]] * 2):
        with pytest.raises(OpError) as caught:
            op(ns, "observe.record", session_id="s", actions=actions)
        assert caught.value.status == 422


def test_without_a_model_the_builder_writes_the_sessions_episodes_with_their_evidence(ns, worker):
    op(ns, "observe.record", session_id="s1", project="billing", branch="ledger-move", actions=SESSION)
    answer = op(ns, "observe.crystallize", session_id="s1", defer=False)
    assert answer["actions"] == 5 and answer["remaining"] == 0
    assert answer["run"]["status"] == SUCCEEDED, answer["run"]
    threads = op(ns, "memory.inspect")["threads"]
    assert {t["kind"] for t in threads} == {"Episodic"} and len(threads) == 2
    batch = next(t for t in threads if "the agent edited" in t["content"])
    assert batch["content"] == (
        "On 2026-11-30, in session s1 on billing/ledger-move, the agent edited src/ledger.py and "
        "src/export.py, and ran `pytest -q tests/test_ledger.py` (failed, then succeeded after an edit to "
        "src/export.py)."
    )
    assert "billing/ledger-move" in batch["content"] and "src/ledger.py" in batch["content"]
    assert len(batch["evidenceIds"]) == 5 and set(batch["subjects"]) == {"src/ledger.py", "src/export.py"}
    failure = next(t for t in threads if t is not batch)
    assert "AssertionError: totals differ" in failure["content"] and "later succeeded" in failure["content"]
    wait_until(settled, what="the episodes' embeddings")
    found = op(ns, "memory.search", query="pytest failed totals differ", kinds=["Episodic"])["hits"]
    assert found and found[0]["id"] == failure["id"]
    assert op(ns, "memory.recall", query="totals differ")["hits"][0]["role"] == "tool"
    # Nothing new: nothing requested; the same actions sent again add nothing to crystallize.
    op(ns, "observe.record", session_id="s1", actions=SESSION)
    nothing = op(ns, "observe.crystallize", session_id="s1")
    assert nothing["run"] is None and nothing["actions"] == 0
    assert len(op(ns, "memory.inspect")["threads"]) == 2


READS = [
    action(1, "src/ledger.py", files=["src/ledger.py"], tool="Read"),
    action(2, "ls -la src"),
    action(3, "git status && git diff --stat"),
    action(4, "TODO", tool="Grep"),
    action(5, "grep -rn totals_v2 src", "error", error="exit 1"),  # a grep that matched nothing
]


@pytest.mark.parametrize("with_model", [False, True], ids=["builder", "model"])
def test_a_session_with_nothing_worth_remembering_writes_no_episode(ns, worker, request, with_model):
    llm = request.getfixturevalue("llm") if with_model else None
    op(ns, "observe.record", session_id="s1", actions=READS)
    answer = op(ns, "observe.crystallize", session_id="s1", defer=False)
    assert answer["actions"] == 5
    assert (answer["run"]["status"], answer["run"]["reason"]) == ("skipped", "nothing-worth-remembering")
    assert op(ns, "memory.inspect")["threads"] == []
    assert llm is None or llm.chat_calls == []  # no model asked
    assert op(ns, "memory.recall", query="totals_v2")["hits"]  # the actions stay evidence


def test_no_secret_of_a_command_or_an_error_reaches_an_episode(ns, worker):
    leaky = f"Traceback (most recent call last):\nRuntimeError: login refused, {SECRET}"
    actions = [
        action(1, "src/deploy.py", files=["src/deploy.py"], tool="Edit"),
        action(2, f"curl -H 'Authorization: Bearer {KEY}' https://ops.example.com"),  # high: kept out
        action(3, "make deploy", "error", error=leaky),  # its first line is plain; the rest is not
        action(4, "make deploy", "error", error=f"exit 1: {SECRET}"),  # high: kept out
    ]
    assert op(ns, "observe.record", session_id="s1", actions=actions)["high"] == 2
    run = op(ns, "observe.crystallize", session_id="s1", defer=False)["run"]
    assert run["status"] == SUCCEEDED, run
    (episode,) = op(ns, "memory.inspect")["threads"]
    assert episode["content"] == (
        "On 2026-11-30, in session s1, the agent edited src/deploy.py, and ran `make deploy` (failed, not "
        "fixed)."
    )
    assert len(episode["evidenceIds"]) == 2


def test_the_model_writes_episodes_and_never_reads_a_high_action(ns, llm, worker):
    def episodes(request: dict) -> dict:
        prompt = request["messages"][-1]["content"]
        assert "ledger.py" in prompt
        return {"facts": [{"content": "The agent fixed the ledger totals in src/ledger.py", "lines": [2, 3]}]}

    llm.reply = episodes
    high = action(9, "echo done", error=None) | {"summary": f"curl -H 'Authorization: {SECRET}'"}
    recorded = op(ns, "observe.record", session_id="s1", actions=[*SESSION, high])
    assert recorded["high"] == 1
    answer = op(ns, "observe.crystallize", session_id="s1", defer=False)
    assert answer["run"]["status"] == SUCCEEDED and answer["run"]["result"]["sent"] == 5, answer["run"]
    (thread,) = op(ns, "memory.inspect")["threads"]
    assert thread["kind"] == "Episodic" and len(thread["evidenceIds"]) == 2
    assert not any("sk-proj" in m["content"] for call_ in llm.chat_calls for m in call_)


def test_a_token_bounded_to_a_user_is_refused_and_a_viewer_cannot_record(ns):
    ana = authenticate(f"Bearer {create_token([ns], 'writer', 'own_user', read_user_id='ana')}")
    viewer = authenticate(f"Bearer {create_token([ns], 'viewer')}")
    for caller in (ana, viewer):
        with pytest.raises(OpError) as caught:
            op(ns, "observe.record", caller=caller, session_id="s", actions=SESSION[:1])
        assert caught.value.status == 403


def test_erasure_takes_a_persons_actions_and_a_namespaces_all(ns, worker):
    op(ns, "observe.record", session_id="s1", user_id="ana", actions=SESSION[:2])
    op(ns, "observe.record", session_id="s2", actions=SESSION[:1])
    by_user = call("erasure.request", OPERATOR, {"namespace": ns, "user_id": "ana", "wait": True})["run"]
    assert by_user["result"]["observations"] == 2, by_user
    assert op(ns, "observe.crystallize", session_id="s1")["run"] is None
    whole = call("erasure.request", OPERATOR, {"namespaces": [ns], "wait": True})["run"]
    assert whole["result"]["observations"] == 1


def test_the_builders_run_delivered_twice_writes_its_episodes_once(ns, worker):
    op(ns, "observe.record", session_id="s1", actions=SESSION)
    run = op(ns, "observe.crystallize", session_id="s1", defer=False)["run"]
    first = sorted((t["content"], tuple(t["evidenceIds"])) for t in op(ns, "memory.inspect")["threads"])
    with db.session() as s:  # delivered again as if its first outcome had never been recorded
        s.exec(text("UPDATE stage_runs SET status = 'pending' WHERE id = :id"), params={"id": run["id"]})
    stages.body(stages.get("extraction"))([run["id"]])
    assert ledger.get(run["id"]).status == SUCCEEDED
    assert (
        sorted((t["content"], tuple(t["evidenceIds"])) for t in op(ns, "memory.inspect")["threads"]) == first
    )
