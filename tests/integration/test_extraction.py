"""memory.set_from_messages and memory.recall on the real database, broker, workers and the local
LLM server: evidence kept whether or not the namespace records, typed facts written as memory
threads with their evidence, never a high message in a prompt, and the stock provider extracting
nothing."""

import re
import uuid

import pytest

from models.stage_run import SKIPPED, SUCCEEDED
from ops.caller import OPERATOR
from ops.errors import OpError
from ops.registry import call
from tests.support.calls import enable_logging
from tests.support.waits import settled, wait_until

SECRET = "my card is 4111 1111 1111 1111, exp 12/29"
MESSAGES = [
    {"role": role, "content": content, "ts": ts}
    for role, content, ts in (
        ("user", "I moved to Porto last spring and I work at the harbour office.", "2026-03-02T09:00:00Z"),
        ("assistant", "Noted: Porto, harbour office.", "2026-03-02T09:00:05Z"),
        ("user", SECRET, "2026-03-02T09:01:00Z"),
        ("user", "My sister Ines visits in June.", "2026-03-03T10:00:00Z"),
    )
]


@pytest.fixture
def ns(database) -> str:
    namespace = f"extract-{uuid.uuid4().hex[:8]}"
    enable_logging(namespace, enabled=False)  # extraction does not need the transcript recorded
    return namespace


def op(ns: str, op_name: str, **body) -> dict:
    return call(op_name, OPERATOR, {"namespace": ns, **body})


def facts_citing(request: dict) -> dict:
    prompt = request["messages"][-1]["content"]
    facts = []
    if "Porto" in prompt:
        facts.append({"content": "The user lives in Porto and works at the harbour office", "lines": [1, 2]})
    if "Ines" in prompt:
        facts.append({"content": "The user's sister Ines visits in June", "kind": "Episodic", "lines": [3]})
    facts.append({"content": f"leaked {SECRET}", "lines": [1]})  # a fact that reads as high is dropped
    return {"facts": facts}


def test_facts_become_memory_threads_with_their_evidence_and_no_prompt_holds_a_high_message(ns, llm, worker):
    llm.reply = facts_citing
    answer = op(ns, "memory.set_from_messages", thread_id="chat", messages=MESSAGES, defer=False)
    run = answer["run"]
    assert answer["evidence"] == 4 and run["status"] == SUCCEEDED, run
    assert run["result"] == {"facts": 3, "memories": 2, "proposed": 0, "sent": 3, "superseded": 0}
    assert not any("4111" in m["content"] for call_ in llm.chat_calls for m in call_)
    wait_until(settled, what="the memories' embeddings")
    hits = op(ns, "memory.search", query="where does the user live")["hits"]
    porto = next(hit for hit in hits if "Porto" in hit["content"])
    assert porto["basis"] == "Extracted" and len(porto["evidenceIds"]) == 2
    ines = op(ns, "memory.search", query="sister visit", kinds=["Episodic"])["hits"]
    assert [hit["content"] for hit in ines] == ["The user's sister Ines visits in June"]
    # The same messages again: one run, and no second copy of a fact.
    again = op(ns, "memory.set_from_messages", thread_id="chat", messages=MESSAGES)
    assert again["run"]["id"] == run["id"]
    assert len(op(ns, "memory.inspect")["threads"]) == 2


def test_recall_reads_the_evidence_by_words_and_by_time_never_a_high_one(ns, llm, worker):
    llm.reply = facts_citing
    op(ns, "memory.set_from_messages", thread_id="chat", messages=MESSAGES, defer=False)
    by_words = op(ns, "memory.recall", query="harbour office")["hits"]
    assert by_words[0]["msg_id"] and "harbour office" in by_words[0]["excerpt"] and by_words[0]["score"] > 0
    by_time = op(ns, "memory.recall", since="2026-03-02T00:00:00Z", until="2026-03-02T23:59:59Z")["hits"]
    assert [hit["role"] for hit in by_time] == ["user", "assistant"]  # the high one is never returned
    assert not op(ns, "memory.recall", query="card 4111")["hits"]
    with pytest.raises(OpError) as backwards:
        op(ns, "memory.recall", since="2026-03-03T00:00:00Z", until="2026-03-02T00:00:00Z")
    assert backwards.value.status == 422


def test_the_stock_provider_extracts_nothing_and_the_evidence_is_kept(ns, worker):
    answer = op(ns, "memory.set_from_messages", thread_id="chat", messages=MESSAGES[:2], defer=False)
    assert (answer["run"]["status"], answer["run"]["reason"]) == (SKIPPED, "no-llm-provider")
    assert len(op(ns, "memory.recall")["hits"]) == 2 and not op(ns, "memory.inspect")["threads"]


def test_two_messages_of_one_identity_are_refused(ns):
    twice = [{"role": "user", "content": "same"}, {"role": "user", "content": "same"}]
    with pytest.raises(OpError) as refused:
        op(ns, "memory.set_from_messages", thread_id="chat", messages=twice)
    assert refused.value.status == 422


def test_a_loom_that_weaves_in_suggest_mode_proposes_the_facts_to_the_session(ns, llm, worker):
    llm.reply = facts_citing
    loom = op(ns, "looms.create", name="proposing", weaving_mode="Suggest")
    assert loom["created"] and loom["loom"]["weavingMode"] == "Suggest"
    assert not op(ns, "looms.create", name="proposing")["created"]  # the same name: the same loom
    where = {"loom_id": loom["loom"]["id"], "thread_id": "chat", "agent": "guide"}
    run = op(ns, "memory.set_from_messages", messages=MESSAGES, defer=False, **where)["run"]
    assert run["status"] == SUCCEEDED and (run["result"]["proposed"], run["result"]["memories"]) == (2, 0)
    assert not op(ns, "memory.inspect", loom_id=where["loom_id"])["threads"]
    packed = op(ns, "context.pack", **where)
    proposals = packed["proposals"]
    assert sorted(p["content"] for p in proposals) == [
        "The user lives in Porto and works at the harbour office",
        "The user's sister Ines visits in June",
    ]
    assert all(p["basis"] == "Extracted" and p["until"] is None for p in proposals)
    assert packed["session"]["pendingProposals"] == [] and op(ns, "context.pack", **where)["proposals"] == []
    auto = op(ns, "looms.update", loom_id=where["loom_id"], weaving_mode="Auto")
    assert auto["loom"]["weavingMode"] == "Auto"


REVERSAL = [
    {"role": "user", "content": "Change of plan: product search moves from Elasticsearch to PostgreSQL."}
]


def reversing(request: dict) -> dict:
    """A model that reads the prompt's already remembered facts and says which one the new fact
    makes untrue, by its label, with a cue."""
    prompt = request["messages"][-1]["content"]
    if "PostgreSQL" not in prompt:
        return {"facts": []}
    labels = re.findall(r"^\[(m\d+)\] .*Elasticsearch.*$", prompt, re.M)
    fact = "The search team runs product search on PostgreSQL full-text search."
    return {"facts": [{"content": fact, "lines": [1], "cues": ["product search"], "replaces": labels}]}


def test_a_fact_that_reverses_a_remembered_one_ends_it_and_the_tapestry_carries_only_the_new(ns, llm, worker):
    llm.reply = reversing
    old = op(ns, "memory.set", content="The search team runs product search on Elasticsearch.")["thread"]
    kept = op(ns, "memory.set", content="Elasticsearch clusters are sized by the platform team.")["thread"]
    op(ns, "memory.pin", thread=kept["id"])  # pinned: the person's choice, never offered for replacing
    run = op(ns, "memory.set_from_messages", thread_id="chat", messages=REVERSAL, defer=False)["run"]
    assert run["status"] == SUCCEEDED and run["result"]["superseded"] == 1, run
    [prompt] = [call_[-1]["content"] for call_ in llm.chat_calls]
    assert old["content"] in prompt and kept["content"] not in prompt
    live = {t["content"]: t for t in op(ns, "memory.inspect")["threads"]}
    assert old["content"] not in live and kept["content"] in live
    new = live["The search team runs product search on PostgreSQL full-text search."]
    assert new["cues"] == ["product search"]
    tapestry = op(ns, "context.pack", thread_id="next-session")["tapestry"]
    assert "PostgreSQL" in tapestry and old["content"] not in tapestry
    # Said again in another conversation: the ended thread is no longer known, nothing more ends.
    again = op(ns, "memory.set_from_messages", thread_id="other", messages=REVERSAL, defer=False)["run"]
    assert again["status"] == SUCCEEDED and again["result"]["superseded"] == 0
    assert old["content"] not in llm.chat_calls[-1][-1]["content"]
