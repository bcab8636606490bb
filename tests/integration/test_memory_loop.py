"""The memory loop's contract (issue 36): the tapestry within a budget of tokens, naming each
thread's id, woven once; the threads a session holds; memory.suggest's receipts, budget and once a
session (never a thread of the tapestry); memory.session_record; and the MCP tool that pins."""

import uuid

import pytest

from ops.caller import OPERATOR
from ops.errors import OpError
from ops.registry import call
from pipelines.token_budget import tokens
from tests.support.calls import enable_logging
from tests.support.waits import settled, wait_until

NS = "loop"


@pytest.fixture(autouse=True)
def namespace(database):
    global NS
    NS = f"loop-{uuid.uuid4().hex[:8]}"
    enable_logging(NS)


def op(op_name: str, **body) -> dict:
    return call(op_name, OPERATOR, {"namespace": NS, **body})


def remember(content: str, **body) -> dict:
    answer = op("memory.set", content=content, **body)
    assert answer["stored"], answer
    return answer["thread"]


def session(**body) -> dict:
    return {"thread_id": f"t-{uuid.uuid4().hex[:6]}", "agent": "claude-code", **body}


def test_tokens_are_a_quarter_of_the_characters_rounded_up():
    assert [tokens(""), tokens("abc"), tokens("abcd"), tokens("abcde")] == [0, 1, 1, 2]


def test_the_tapestry_fits_the_first_calls_budget_and_names_each_threads_id():
    threads = [remember(f"fact {i}: the build server number {i} runs " + "words " * 10) for i in range(12)]
    where = session()
    first = op("context.pack", max_tokens=120, **where)
    assert tokens(first["tapestry"]) <= 120
    woven = first["session"]["tapestryThreadIds"]
    assert 0 < len(woven) < len(threads)
    lines = first["tapestry"].splitlines()[1:]
    assert [line.rsplit("[", 1)[1].rstrip("]") for line in lines] == woven
    again = op("context.pack", max_tokens=8000, **where)  # woven once: the first call's budget holds
    assert again["tapestry"] == first["tapestry"]


def test_the_default_budget_is_the_setting(loom_env):
    loom_env(LOOM_TAPESTRY_MAX_TOKENS="60")
    for i in range(8):
        remember(f"the deploy note {i} says " + "more " * 12)
    assert tokens(op("context.pack", **session())["tapestry"]) <= 60


@pytest.mark.parametrize("max_tokens", [49, 8001])
def test_a_budget_out_of_bounds_is_refused(max_tokens):
    with pytest.raises(OpError) as refused:
        op("context.pack", max_tokens=max_tokens, **session())
    assert refused.value.status == 422


def test_context_pack_answers_the_threads_the_session_holds_while_they_live():
    where = session()
    kept = remember("the release branch is frozen until the audit ends")
    gone = remember("the old staging host is heron")
    op("memory.pin", thread=kept["id"], **where)
    op("memory.pin", thread=gone["id"], **where)
    assert [t["id"] for t in op("context.pack", **where)["held"]] == [kept["id"], gone["id"]]
    op("memory.cut", thread=gone["id"])
    assert [t["id"] for t in op("context.pack", **where)["held"]] == [kept["id"]]
    assert op("context.pack", **session())["held"] == []  # another session holds nothing


def test_a_suggestion_says_why_it_was_offered(worker):
    falcon = remember("Project Falcon ships on the ninth of May", cues=["Project Falcon"])
    staging = remember("the staging database is called pg-stage-04")
    wait_until(settled, what="the embeddings")
    where = session()
    cued = op("memory.suggest", said="what about project falcon?", **where)["suggestions"]
    assert cued[0]["id"] == falcon["id"]
    assert cued[0]["receipt"].startswith('cue "Project Falcon" was said')
    found = op("memory.suggest", said="which staging database do the tests use?", **where)["suggestions"]
    [hit] = [s for s in found if s["id"] == staging["id"]]
    assert hit["receipt"].startswith(f"similarity {hit['similarity']:.2f} to what was said")
    assert "words in common" in hit["receipt"]


def test_a_thread_not_embedded_yet_is_offered_for_its_words():
    """No worker: the thread has no vector, so the lexical leg alone vouches for it."""
    thread = remember("the quarterly audit needs the ledger export")
    [offered] = op("memory.suggest", said="when is the quarterly audit?", **session())["suggestions"]
    assert offered["id"] == thread["id"] and offered["similarity"] is None
    assert offered["receipt"] == "words in common"


def test_suggestions_fit_their_budget_and_what_does_not_fit_may_come_later():
    for i in range(6):
        remember(f"the invoice export job number {i} " + "detail " * 30)
    where = session()
    small = op("memory.suggest", said="the invoice export job", max_tokens=100, **where)["suggestions"]
    assert len(small) == 1  # each is some 70 tokens: one fits
    later = op("memory.suggest", said="the invoice export job", max_tokens=4000, **where)["suggestions"]
    assert len(later) == 5 and small[0]["id"] not in {s["id"] for s in later}


def test_a_thread_of_the_tapestry_is_never_suggested(loom_env):
    loom_env(LOOM_SUGGEST_MAX_TOKENS="20")  # the setting is the default budget: nothing fits
    woven = remember("the nightly backup runs at two in the morning")
    where = session()
    assert op("memory.suggest", said="the nightly backup", **where)["suggestions"] == []
    assert op("context.pack", **where)["session"]["tapestryThreadIds"] == [woven["id"]]
    assert op("memory.suggest", said="the nightly backup", max_tokens=4000, **where)["suggestions"] == []


@pytest.mark.parametrize("max_tokens", [19, 4001])
def test_a_suggest_budget_out_of_bounds_is_refused(max_tokens):
    with pytest.raises(OpError) as refused:
        op("memory.suggest", said="anything", max_tokens=max_tokens, **session())
    assert refused.value.status == 422


def test_session_record_records_live_threads_of_the_loom_and_skips_the_rest():
    recalled = remember("the API rate limit is 600 requests a minute")
    seen = remember("the on-call rota changes on Mondays")
    held = remember("never run migrations by hand on production")
    set_ = remember("the staging database is reset on Sundays")
    cut = remember("the cache warms at boot")
    op("memory.cut", thread=cut["id"])
    other_loom = op("looms.create", name="elsewhere")["loom"]["id"]
    foreign = op("memory.set", content="a thread of another loom", loom_id=other_loom)["thread"]["id"]
    where = session()
    answer = op(
        "memory.session_record",
        recalled=[recalled["id"], str(uuid.uuid4()), foreign],
        seen=[seen["id"], cut["id"]],
        held=[held["id"]],
        woven=[set_["id"], cut["id"]],
        **where,
    )
    assert answer["recorded"] == 4
    packed = op("context.pack", **where)
    state = packed["session"]
    assert state["id"] == answer["session"]
    assert (state["recalledThreadIds"], state["seenThreadIds"]) == ([recalled["id"]], [seen["id"]])
    assert state["heldThreadIds"] == [held["id"]]
    assert state["wovenThreadIds"] == [held["id"], set_["id"]]
    assert {recalled["id"], seen["id"], held["id"], set_["id"]} <= set(state["knownThreadIds"])
    assert [t["id"] for t in packed["held"]] == [held["id"]]
    assert op("memory.session_record", recalled=[recalled["id"]], **where)["recorded"] == 1  # once


def test_session_record_bounds_its_lists():
    with pytest.raises(OpError) as refused:
        op("memory.session_record", recalled=[str(uuid.uuid4()) for _ in range(101)], **session())
    assert refused.value.status == 422
    with pytest.raises(OpError) as not_an_id:
        op("memory.session_record", seen=["not-a-uuid"], **session())
    assert not_an_id.value.status == 422


def test_the_tapestry_holds_one_of_the_episodes_that_say_the_same_thing_and_facts_first():
    fact = remember("the billing service owns the invoices table", weight=0.3)
    for session_name in ("3f2b8c1e-5d4a-4e6b-9c7d-2a1b0c9d8e7f", "9d8e7f00-1111-4e6b-9c7d-2a1b0c9d8e7f"):
        remember(f"In session {session_name} the agent ran 2 tool actions.", kind="Episodic", weight=0.9)
    fixed = remember("The agent fixed the failing invoice export test.", kind="Episodic", weight=0.9)
    packed = op("context.pack", **session())
    lines = packed["tapestry"].splitlines()[1:]
    assert lines[0] == f"- {fact['content']} [{fact['id']}]"  # a fact before heavier episodes
    assert sum("tool actions" in text for text in lines) == 1 and fixed["id"] in packed["tapestry"]


def test_no_secret_reaches_a_pack_from_memory_episodes_or_working_memory(worker):
    secret = "my card is 4111 1111 1111 1111, exp 12/29"
    assert not op("memory.set", content=f"remember {secret}")["stored"]
    remember("the team ships on Tuesdays", subjects=["ana"])
    block = {"user_id": "ana", "project": "billing", "branch": "main"}
    op("working_memory.set", content=f"next: pay with {secret}", **block)
    actions = [
        {"tool": "Bash", "input_sha256": "1" * 64, "summary": f"echo '{secret}'", "outcome": "error"},
        {"tool": "Bash", "input_sha256": "2" * 64, "summary": "pytest -q", "outcome": "ok"},
    ]
    op("observe.record", session_id="s-secret", actions=actions, **block)
    op("observe.crystallize", session_id="s-secret")
    wait_until(settled, what="the episodes")
    where = session(subjects=["billing", "main"], **block)
    packs = [op("context.pack", **where), op("context.pack", **where)]
    text = repr(packs)
    assert "4111" not in text and "the team ships on Tuesdays" in packs[0]["tapestry"]
    assert packs[0]["working_memory"]["withheld"] is True


def test_a_later_pack_carries_what_was_pinned_in_the_session():
    where = session()
    first = op("context.pack", user_id="ana", **where)
    assert first["tapestry"] is None and first["held"] == []
    pinned = remember("the audit ends on the thirtieth")
    op("memory.pin", thread=pinned["id"], **where)
    later = op("context.pack", user_id="ana", **where)
    assert later["tapestry"] is None  # woven once
    assert [t["id"] for t in later["held"]] == [pinned["id"]]


def test_a_cue_is_found_by_its_index_as_whole_words_whatever_its_length_or_case():
    """No worker: a thread not embedded passes vetting by its words, and only a cue said makes it
    cued."""
    host = remember("the staging database host", cues=["pg-stage-04"])
    long_cue = "when the nightly export to the finance ledger replica runs late again"
    late = remember("page the data team when the export runs late", cues=[long_cue])
    word = remember("the pass office is by the gate", cues=["pass"])
    said = f"is PG-Stage-04 up? {long_cue.upper()}, and what about backstage passes"
    offered = op("memory.suggest", said=said, **session())["suggestions"]
    cued = {s["id"] for s in offered if s["cued"]}
    assert cued == {host["id"], late["id"]} and word["id"] not in cued


def test_a_tapestry_reads_the_threads_about_its_subjects_and_only_the_best_of_the_rest(monkeypatch):
    from pipelines import tapestry

    monkeypatch.setattr(tapestry, "REST", 2)  # of the threads about none of its subjects, two
    about = remember("the Billing-Service ledger closes at midnight", weight=0.1)
    named = remember("ledger exports go to the finance bucket", subjects=["billing-service"], weight=0.1)
    pinned = remember("never deploy on a Friday", weight=0.1)
    op("memory.pin", thread=pinned["id"])
    heavy = [remember(f"the cache node {i} restarts weekly", weight=0.9) for i in range(2)]
    light = remember("the cache warms at boot", weight=0.2)  # the third of the rest: never read
    woven = op("context.pack", subjects=["billing-service"], max_tokens=8000, **session())["session"]
    ids = woven["tapestryThreadIds"]
    assert ids[0] == pinned["id"] and set(ids[1:3]) == {about["id"], named["id"]}
    assert set(ids[3:]) == {t["id"] for t in heavy} and light["id"] not in ids
