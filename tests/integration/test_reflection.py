"""memory.reflect on the real database, broker, workers and the local LLM server: the knots and
tensions of a planted contradiction (a newer fact superseding an older one), the cited threads
recorded as recalled and the ones shown as seen, the deterministic builder without a model and the
model's answer with one (the reflection stage), a thread that reads as high kept out of the prompt
and the answer, and what night weaving does with a tension."""

import json
import re
import uuid

import pytest
from sqlalchemy import text
from typer.testing import CliRunner

import cli
from models import db
from models.base import utcnow
from ops.caller import OPERATOR
from ops.registry import call
from pipelines import memory
from schedules.night_weaving import weave_night
from tests.support.calls import append, enable_logging
from tests.support.waits import settled, wait_until

SECRET = "my card is 4111 1111 1111 1111, exp 12/29"


def card_in(text: str) -> bool:
    """SECRET's card number in ``text``, spaced or not ("4111" alone is found in random ids)."""
    return "4111 1111" in text or "41111111" in text


NS = "reflect"


@pytest.fixture(autouse=True)
def namespace(database):
    global NS
    NS = f"reflect-{uuid.uuid4().hex[:8]}"
    enable_logging(NS)


def op(name: str, **body) -> dict:
    return call(name, OPERATOR, {"namespace": NS, **body})


def remember(content: str, **body) -> str:
    answer = op("memory.set", content=content, **body)
    assert answer["stored"], answer
    return answer["thread"]["id"]


def planted(embedded: bool = False) -> tuple[str, str, str]:
    """An older fact, a newer one saying it differently, and another fact about the same person;
    ``embedded`` (with a worker): once their vectors are stored, so what a reflection draws on (its
    hits, its tensions by vector) does not change between two asks."""
    older = remember("Ana deploys the billing service on Tuesdays", subjects=["Ana"], cues=["deploy"])
    newer = remember("Ana deploys the billing service on Thursdays", subjects=["ana"])
    other = remember("Ana prefers release notes as a bulleted list", subjects=["Ana"])
    if embedded:
        wait_until(settled, what="the threads' embeddings")
    return older, newer, other


def test_without_a_model_the_threads_knots_and_tensions_answer_and_are_recorded():
    older, newer, other = planted()
    answer = op("memory.reflect", question="When does Ana deploy the billing service?", thread_id="chat")
    assert (answer["by"], answer["reason"], answer["run_id"]) == ("threads", "no-llm-provider", None)
    assert {older, newer} <= set(answer["cited"])
    [tension] = answer["tensions"]
    assert tension["type"] == "supersedes" and tension["threads"] == [older, newer]
    assert tension["newer"] == newer and tension["subject"].casefold() == "ana"
    assert tension["kind"] == "Semantic"
    knots = {(k["shares"], k["value"].casefold()): set(k["threads"]) for k in answer["knots"]}
    assert knots[("subject", "ana")] == {older, newer, other}
    # No invented prose: each line is a thread verbatim, a knot or a tension, in fixed forms.
    lines = answer["answer"].splitlines()
    assert all(re.match(r"^(\[t:[0-9a-f]{8}\] \d{4}-\d\d-\d\d |Knot: |Tension: )", line) for line in lines)
    assert "Ana deploys the billing service on Tuesdays" in answer["answer"]
    assert f"[t:{uuid.UUID(newer).hex[:8]}] is newer than [t:{uuid.UUID(older).hex[:8]}]" in answer["answer"]
    [recorded] = op("looms.sessions")["sessions"]
    assert recorded["id"] == answer["session"]
    assert sorted(recorded["recalledThreadIds"]) == sorted(answer["cited"])
    assert sorted(recorded["seenThreadIds"]) == sorted(answer["seen"])
    assert {older, newer, other} <= set(recorded["seenThreadIds"]) <= set(recorded["knownThreadIds"])
    assert [t["id"] for t in answer["threads"]][: len(answer["cited"])] == answer["cited"]


def test_a_question_nothing_answers_finds_nothing_and_records_nothing():
    remember("Ana deploys the billing service on Tuesdays", subjects=["Ana"])
    answer = op("memory.reflect", question="zebra quasar", thread_id="chat")
    assert (answer["answer"], answer["cited"], answer["reason"]) == ("", [], "nothing-found")
    [recorded] = op("looms.sessions")["sessions"]
    assert recorded["recalledThreadIds"] == recorded["seenThreadIds"] == []


def test_bounds_are_answered_422():
    from ops.errors import OpError

    for body in ({"question": ""}, {"question": "x" * 2001}, {"question": "q", "limit": 21}):
        with pytest.raises(OpError) as refused:
            op("memory.reflect", **body)
        assert refused.value.status == 422


def plant_high(monkeypatch, content: str, **fields) -> str:
    """A thread written before the rules read its text as high (memory.set refuses it now)."""
    with monkeypatch.context() as m, db.session() as s:
        m.setattr("pipelines.screening.is_high", lambda text: False)
        new = memory.NewMemory(content=content, kind="Semantic", weight=0.9, basis="Said", **fields)
        thread = memory.write(s, memory.default_loom(s, NS), new, utcnow())
        assert thread is not None
        return str(thread.id)


def model_answer(request: dict) -> dict:
    """The model's answer: it cites every thread id its prompt names."""
    prompt = request["messages"][-1]["content"]
    ids = sorted(set(re.findall(r"\[t:[0-9a-f]{8}\]", prompt)))
    return {"answer": f"Ana now deploys on Thursdays {ids[-1]}, earlier on Tuesdays {ids[0]}."}


def test_with_a_model_the_answer_is_its_prose_from_screened_threads_only(llm, worker, monkeypatch):
    older, newer, _ = planted(embedded=True)
    high = plant_high(monkeypatch, f"Ana deploys the billing service with {SECRET}", subjects=["Ana"])
    llm.reply = model_answer
    answer = op("memory.reflect", question="When does Ana deploy the billing service?", thread_id="chat")
    assert (answer["by"], answer["reason"]) == ("model", None), answer
    assert answer["answer"].startswith("Ana now deploys on Thursdays [t:")
    assert answer["run_id"] and answer["withheld"] >= 1
    assert high not in answer["cited"] + answer["seen"] + [t["id"] for t in answer["threads"]]
    assert not card_in(json.dumps(answer))
    # The calls of this reflection: a run another test left pending may reach the model meanwhile.
    [[system, user]] = mine = [c for c in llm.chat_calls if uuid.UUID(older).hex[:8] in c[-1]["content"]]
    assert "Ana deploys the billing service on Tuesdays" in user["content"]
    assert not card_in(user["content"]) and uuid.UUID(high).hex[:8] not in user["content"]
    assert "supersedes" in user["content"] and "present both" in system["content"]
    # The same reflection again is the same run: the model is not asked twice.
    again = op("memory.reflect", question="When does Ana deploy the billing service?")
    assert (again["run_id"], again["answer"]) == (answer["run_id"], answer["answer"])
    assert [c for c in llm.chat_calls if uuid.UUID(older).hex[:8] in c[-1]["content"]] == mine


def test_a_question_that_reads_as_high_is_never_sent(llm, worker):
    older, newer, _ = planted(embedded=True)
    answer = op("memory.reflect", question=f"When does Ana deploy the billing service? {SECRET}")
    assert (answer["by"], answer["reason"], answer["run_id"]) == (
        "threads",
        "question-high-sensitivity",
        None,
    )
    assert {older, newer} <= set(answer["cited"])
    # No prompt holds the question or this reflection's threads (a run an earlier test left
    # pending may still reach the model meanwhile: it names other threads).
    sent = [m["content"] for chat in llm.chat_calls for m in chat]
    assert not any(card_in(text) or uuid.UUID(older).hex[:8] in text for text in sent), sent


def test_an_answer_that_reads_as_high_is_dropped_for_the_threads(llm, worker):
    planted(embedded=True)
    llm.reply = lambda request: {"answer": f"Ana pays with {SECRET}"}
    answer = op("memory.reflect", question="When does Ana deploy the billing service?")
    assert (answer["by"], answer["reason"]) == ("threads", "answer-high-sensitivity")
    assert not card_in(json.dumps(answer))
    llm.chat_calls.clear()  # the reply held it, not a prompt: the fixture checks the prompts sent


def test_a_model_that_does_not_answer_in_time_leaves_the_threads_to_answer(llm, worker):
    planted(embedded=True)
    llm.mode = "stall"
    answer = op("memory.reflect", question="When does Ana deploy the billing service?", wait_seconds=0.5)
    assert (answer["by"], answer["reason"]) == ("threads", "pending") and answer["run_id"]
    assert answer["tensions"] and "Tuesdays" in answer["answer"]


def test_night_weaving_ends_the_superseded_thread_once_and_says_so(worker):
    older, newer, other = planted(embedded=True)
    pinned_old = remember("Ana's standup is at nine", subjects=["Ana"])
    op("memory.pin", thread=pinned_old)
    chat = "night"
    append(NS, chat, "Ana's standup moved", agent="default", msg_id="m1")
    new_standup = op("memory.set", content="Ana's standup is at ten", subjects=["Ana"], thread_id=chat)
    op(
        "memory.set",
        content="Ana deploys the billing service on Thursdays now",
        subjects=["Ana"],
        thread_id=chat,
    )
    loom = op("looms.list")["looms"][0]["id"]
    woven = CliRunner().invoke(cli.app, ["night-weave", "--loom", loom, "--wait", "--timeout", "60"])
    assert woven.exit_code == 0, woven.output
    with db.session() as s:
        rows = dict(
            s.execute(
                text("SELECT CAST(id AS text), until FROM memory_threads WHERE namespace = :ns"), {"ns": NS}
            ).all()
        )
        created = dict(
            s.execute(
                text("SELECT CAST(id AS text), created_at FROM memory_threads WHERE namespace = :ns"),
                {"ns": NS},
            ).all()
        )
        [result] = s.execute(
            text("SELECT result FROM stage_runs WHERE stage = 'night_weaving' ORDER BY id DESC LIMIT 1")
        ).scalars()
    # The older deploy days are superseded by the newer; the pinned standup stays; others untouched.
    assert rows[older] is not None and rows[newer] is not None
    assert rows[pinned_old] is None and rows[other] is None
    by = {change["thread"]: change["by"] for change in result["superseded"]}
    assert set(by) == {older, newer}
    assert rows[older] == created[by[older]]
    assert f"superseded {older} by {by[older]}" in woven.output  # what the operator is told
    assert new_standup["stored"]
    found = op("memory.reflect", question="When does Ana deploy the billing service?")
    assert older not in found["cited"] and newer not in found["cited"]
    assert any(t["type"] == "expired" for t in found["tensions"])
    # A second night (which weaves its own episode) ends nothing more.
    append(NS, chat, "and again", agent="default", msg_id="m2")
    weave_night()
    wait_until(settled, what="the second night's runs")
    with db.session() as s:
        [again] = s.execute(
            text("SELECT result FROM stage_runs WHERE stage = 'night_weaving' ORDER BY id DESC LIMIT 1")
        ).scalars()
        until = dict(
            s.execute(
                text("SELECT CAST(id AS text), until FROM memory_threads WHERE namespace = :ns"), {"ns": NS}
            ).all()
        )
    assert {i: until[i] for i in rows} == rows and again["superseded"] == []
