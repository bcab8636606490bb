"""Looms, memory threads and LoomSessions on the real database, broker and embedding worker:
memory.set / search / pin / cut / reframe / inspect, context.pack's tapestry, the session an
append moves on, and looms.sessions as GET /looms/by-id/{id}/sessions serves it."""

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from freezegun import freeze_time
from sqlalchemy import text

from models import db
from models.settings import get_settings
from ops.caller import OPERATOR, Caller
from ops.errors import OpError
from ops.registry import call
from tests.support.calls import append, enable_logging
from tests.support.waits import settled, wait_until

SECRET = "my card is 4111 1111 1111 1111, exp 12/29"
NS = "memory"  # each test's own: its default loom holds that test's threads only


@pytest.fixture(autouse=True)
def namespace(database):
    global NS
    NS = f"memory-{uuid.uuid4().hex[:8]}"
    enable_logging(NS)


def op(name: str, **body) -> dict:
    return call(name, OPERATOR, {"namespace": NS, **body})


def remember(content: str, **body) -> dict:
    answer = op("memory.set", content=content, **body)
    assert answer["stored"], answer
    return answer["thread"]


def found(query: str, **body) -> list[str]:
    return [hit["content"] for hit in op("memory.search", query=query, **body)["hits"]]


def test_a_memory_is_embedded_by_the_worker_and_found_by_every_mode(worker):
    thread = remember("Priya leads the payments migration to the new ledger", subjects=["Priya"])
    assert thread["kind"] == "Semantic" and thread["basis"] == "Said" and thread["weight"] == 0.5
    wait_until(settled, what="the memory's embedding")
    with db.session() as s:
        assert s.execute(
            text("SELECT vector IS NOT NULL FROM memory_threads WHERE id = :id"), {"id": thread["id"]}
        ).scalar()
    for mode in ("hybrid", "semantic", "lexical"):
        assert found("who runs the ledger migration", search_mode=mode)[:1] == [thread["content"]], mode


def test_a_search_of_words_no_thread_holds_finds_nothing_in_every_mode_like_conversation_search(worker):
    """The one hybrid search's floor: a hit only the vector leg found must pass it, in memory as in
    conversation search."""
    for content in ("Priya leads the payments migration", "The staging database restarts at 02:00"):
        remember(content)
    wait_until(settled, what="the memories' embeddings")
    floor = get_settings().conversation_search_min_similarity
    for mode in ("hybrid", "semantic", "lexical"):
        assert found("zorbleflux quantavine", search_mode=mode) == [], mode
    hits = op("memory.search", query="who leads the payments work", limit=20)["hits"]
    assert hits and all(h["lexicalScore"] is not None or h["similarity"] >= floor for h in hits)


def test_a_memory_that_reads_as_high_is_never_stored(worker):
    answer = op("memory.set", content=f"remember {SECRET}")
    assert (answer["stored"], answer["reason"], answer["thread"]) == (False, "high_sensitivity", None)
    with db.session() as s:
        assert not s.execute(text("SELECT 1 FROM memory_threads WHERE content LIKE '%4111%'")).first()


def test_a_cut_thread_and_one_past_its_until_are_neither_returned_nor_woven():
    """No worker here: a clock moved years ahead would hand it leases and backoffs of that time."""
    cut = remember("the staging cluster is called heron")
    op("memory.cut", thread=cut["id"])
    later = remember("the office moves to Leeds in spring", until="2030-01-01T00:00:00Z")
    assert "the staging cluster is called heron" not in found("staging cluster heron")
    assert found("office Leeds")[:1] == [later["content"]]
    with freeze_time("2030-01-02"):
        assert later["content"] not in found("office Leeds")
        packed = op("context.pack", thread_id=f"t-{uuid.uuid4().hex[:6]}", agent="scout")
        assert later["id"] not in packed["session"]["tapestryThreadIds"]
    with pytest.raises(OpError) as gone:
        op("memory.pin", thread=cut["id"])
    assert gone.value.status == 404


def test_reframing_replaces_the_text_and_embeds_it_again(worker):
    thread = remember("the deploy window is Tuesday")
    answer = op("memory.reframe", thread=thread["id"], content="the deploy window moved to Thursday")
    assert answer["reframed"] and answer["thread"]["basis"] == "Reframed"
    assert not op("memory.reframe", thread=thread["id"], content=SECRET)["reframed"]
    wait_until(settled, what="the new embedding")
    assert found("deploy window Thursday", search_mode="semantic")[:1] == [
        "the deploy window moved to Thursday"
    ]
    assert "the deploy window is Tuesday" not in found("deploy window Tuesday", search_mode="lexical")


def test_the_tapestry_is_woven_once_pinned_first_then_fixed(worker):
    loom = op("looms.list")["looms"][0]
    chat = f"t-{uuid.uuid4().hex[:6]}"
    append(NS, chat, "hello from Mara", user_id="Mara", agent="guide", run_id="run-1")
    light = remember("Mara prefers short answers", subjects=["Mara"], weight=0.2)
    heavy = remember("the quarterly report is due on the fifth", weight=0.9)
    pinned = remember("never deploy on Fridays", weight=0.1)
    op("memory.pin", thread=pinned["id"])
    first = op("context.pack", thread_id=chat, run_id="run-1", agent="guide", subjects=["reports"])
    session = first["session"]
    assert session["loomId"] == loom["id"] and session["subjects"] == ["Mara", "reports"]
    woven = session["tapestryThreadIds"]
    assert woven[0] == pinned["id"] and set(woven) >= {light["id"], heavy["id"]}
    assert first["tapestry"].startswith("What You Know\n- never deploy on Fridays")
    assert set(woven) <= set(session["knownThreadIds"]) and session["tapestryWovenAt"]
    remember("a memory written after the first turn", weight=1.0)
    again = op("context.pack", thread_id=chat, run_id="run-1", agent="guide")
    assert again["tapestry"] == first["tapestry"] and again["session"]["id"] == session["id"]


def test_a_small_budget_weaves_what_fits(worker, loom_env):
    loom_env(LOOM_TAPESTRY_MAX_TOKENS="50")  # ceil(characters / 4): at most 200 characters
    for i in range(6):
        remember(f"fact number {i}: " + "x" * 60)
    packed = op("context.pack", thread_id=f"t-{uuid.uuid4().hex[:6]}", agent="small")
    assert len(packed["tapestry"]) <= 200 and packed["session"]["tapestryThreadIds"]


def test_an_append_moves_its_agents_session_of_that_run_on():
    chat = f"t-{uuid.uuid4().hex[:6]}"
    append(NS, chat, "before the session", agent="coder", run_id="r-7")
    session = op("context.pack", thread_id=chat, run_id="r-7", agent="coder")["session"]
    assert (session["lastSequence"], session["awaitingNight"]) == (1, True)
    append(NS, chat, "the coder's next turn", agent="coder", run_id="r-7")
    append(NS, chat, "another agent's turn", agent="reviewer", run_id="r-7")
    append(NS, chat, "the coder in another run", agent="coder", run_id="r-8")
    [moved] = op("looms.sessions", agent_name="coder")["sessions"][:1]
    assert moved["id"] == session["id"] and moved["lastSequence"] == 2
    assert moved["interactionProcessId"] == str(
        uuid.uuid5(uuid.UUID("0b7d3c2a-8e4f-5a61-b9d0-4c3e2f1a6d22"), "r-7")
    )


def test_ops_record_what_the_agent_was_shown_and_touched(worker):
    chat = f"t-{uuid.uuid4().hex[:6]}"
    where = {"thread_id": chat, "run_id": "r-9", "agent": "analyst"}
    thread = remember("the churn model retrains weekly", **where)
    wait_until(settled, what="the embedding")
    op("memory.search", query="churn model", **where)
    shown = op("memory.inspect", **where)["threads"]
    op("memory.pin", thread=thread["id"], **where)
    session = op("context.pack", **where)["session"]
    assert thread["id"] in session["wovenThreadIds"] and thread["id"] in session["recalledThreadIds"]
    assert thread["id"] in session["heldThreadIds"]
    assert {t["id"] for t in shown} <= set(session["seenThreadIds"]) <= set(session["knownThreadIds"])


def test_a_gift_waits_in_the_receivers_session_and_is_offered_once():
    chat = f"t-{uuid.uuid4().hex[:6]}"
    thread = remember("the client signs on Monday")
    given = op(
        "memory.give", thread=thread["id"], thread_id=chat, run_id="r-1", agent="sales", to_agent="legal"
    )
    waiting = op("looms.sessions", agent_name="legal")["sessions"][0]
    assert waiting["id"] == given["session"] and waiting["pendingGiftThreadIds"] == [thread["id"]]
    assert thread["id"] not in waiting["knownThreadIds"]  # not offered yet
    offered = op("context.pack", thread_id=chat, run_id="r-1", agent="legal")
    assert [gift["id"] for gift in offered["gifts"]] == [thread["id"]]
    assert (
        offered["session"]["pendingGiftThreadIds"] == []
        and thread["id"] in offered["session"]["knownThreadIds"]
    )
    assert op("context.pack", thread_id=chat, run_id="r-1", agent="legal")["gifts"] == []
    with pytest.raises(OpError) as to_itself:
        op("memory.give", thread=thread["id"], thread_id=chat, agent="legal", to_agent="legal")
    assert to_itself.value.status == 422


def test_what_is_said_brings_up_the_threads_it_touches_once_a_session(worker):
    chat = f"t-{uuid.uuid4().hex[:6]}"
    staging = remember("the staging database is called pg-stage-04")
    falcon = remember(
        "Project Falcon, the new mobile app, launches on the ninth of May", cues=["Project Falcon"]
    )
    remember("the cafeteria closes at three on Fridays")
    wait_until(settled, what="the embeddings")
    where = {"thread_id": chat, "run_id": "r-2", "agent": "helper"}
    first = op("memory.suggest", said="which staging database should the tests use?", **where)
    assert [t["id"] for t in first["suggestions"]][:1] == [staging["id"]]
    cued = op("memory.suggest", said="any news on project falcon?", **where)["suggestions"]
    assert cued[0]["id"] == falcon["id"] and cued[0]["cued"] is True
    session = op("looms.sessions", agent_name="helper")["sessions"][0]
    assert session["cuedThreadIds"] == [falcon["id"]]
    assert (
        {staging["id"], falcon["id"]} <= set(session["suggestedThreadIds"]) <= set(session["knownThreadIds"])
    )
    again = op("memory.suggest", said="Project Falcon and the staging database again", **where)["suggestions"]
    assert not {staging["id"], falcon["id"]} & {t["id"] for t in again}  # offered once a session


def test_a_candidate_that_fails_vetting_is_held_back_and_never_shown(worker, loom_env):
    loom_env(LOOM_MEMORY_SUGGEST_MIN_SIMILARITY="0.99")
    chat = f"t-{uuid.uuid4().hex[:6]}"
    falcon = remember("the falcon mascot costume is kept in storage room B", cues=["falcon"])
    wait_until(settled, what="the embedding")
    answer = op("memory.suggest", said="did the falcon rocket launch today?", thread_id=chat, agent="helper")
    assert answer["suggestions"] == [] and answer["heldBack"] == 1
    session = op("looms.sessions", agent_name="helper")["sessions"][0]
    assert session["heldBackThreadIds"] == [falcon["id"]] and session["knownThreadIds"] == []
    assert session["cuedThreadIds"] == [] and session["suggestedThreadIds"] == []


def test_a_loom_of_another_namespace_is_not_found():
    other = call("looms.list", OPERATOR, {"namespace": "elsewhere"})["looms"][0]["id"]
    with pytest.raises(OpError) as refused:
        op("memory.search", query="anything", loom_id=other)
    assert refused.value.status == 404
    viewer = Caller(role="viewer", namespaces=(NS,))
    with pytest.raises(OpError) as forbidden:
        call("memory.set", viewer, {"namespace": NS, "content": "a viewer cannot write"})
    assert forbidden.value.status == 403


UUID_LISTS = [
    "tapestryThreadIds",
    "suggestedThreadIds",
    "heldBackThreadIds",
    "cuedThreadIds",
    "heldThreadIds",
    "pendingGiftThreadIds",
    "recalledThreadIds",
    "wovenThreadIds",
    "seenThreadIds",
    "judgedThreadIds",
    "knownThreadIds",
]


def _uuid(value) -> bool:
    return isinstance(value, str) and str(uuid.UUID(value)) == value


def _moment(value) -> bool:
    return isinstance(value, str) and datetime.fromisoformat(value).utcoffset() == timedelta(0)


def test_the_sessions_route_serves_every_field_of_the_seed_by_name_and_type(client, make_token):
    chat = f"t-{uuid.uuid4().hex[:6]}"
    append(NS, chat, "a turn", agent="route", run_id="3f2b8c1e-5d4a-4e6b-9c7d-2a1b0c9d8e7f")
    op("context.pack", thread_id=chat, run_id="3f2b8c1e-5d4a-4e6b-9c7d-2a1b0c9d8e7f", agent="route")
    loom = op("looms.list")["looms"][0]["id"]
    headers = make_token(NS, role="viewer")
    answer = client.get(f"/looms/by-id/{loom}/sessions?agent_name=route&awaiting_night=true", headers=headers)
    assert answer.status_code == 200, answer.text
    [session] = answer.json()["sessions"]
    expected = {
        "loomId", "interactionProcessId", "agentName", "agentId", "tapestry", "tapestryWovenAt", "subjects",
        *UUID_LISTS, "pendingProposals", "lastTurnAt", "lastSequence", "awaitingNight",
        "consolidatedUpToSequence", "consolidatedByNightWeavingId", "tenantId", "id", "dateCreated",
        "dateUpdated",
    }  # fmt: skip
    assert set(session) == expected
    assert all(_uuid(session[f]) for f in ("loomId", "interactionProcessId", "tenantId", "id"))
    assert session["interactionProcessId"] == "3f2b8c1e-5d4a-4e6b-9c7d-2a1b0c9d8e7f"  # a uuid run is kept
    assert session["agentName"] == "route" and _uuid(session["agentId"])
    assert session["tapestry"] is None and _moment(session["tapestryWovenAt"])  # its loom is empty
    assert all(isinstance(session[f], list) and all(map(_uuid, session[f])) for f in UUID_LISTS)
    assert session["subjects"] == [] and session["pendingProposals"] == []
    assert (
        _moment(session["lastTurnAt"]) and session["lastSequence"] == 1 and session["awaitingNight"] is True
    )
    assert session["consolidatedUpToSequence"] == 0 and session["consolidatedByNightWeavingId"] is None
    assert _moment(session["dateCreated"]) and _moment(session["dateUpdated"])
    assert client.get(f"/looms/by-id/{loom}/sessions", headers={}).status_code == 401
    assert client.get("/looms/by-id/not-a-uuid/sessions", headers=headers).status_code == 422
    paged = client.get(f"/looms/by-id/{loom}/sessions?limit=1", headers=headers).json()
    assert len(paged["sessions"]) == 1


def test_a_named_agent_has_one_id_across_its_sessions_and_an_unnamed_caller_none():
    """Issue 36 item 7: agentId is filled when the agent is known, the same in every session."""

    def agent_id(thread: str, **agent) -> str | None:
        return op("context.pack", thread_id=thread, **agent)["session"]["agentId"]

    chats = [f"t-{uuid.uuid4().hex[:6]}" for _ in range(2)]
    first, second = (agent_id(chat, agent="claude-code") for chat in chats)
    assert _uuid(first) and first == second
    assert agent_id(chats[0], agent="codex") not in (None, first)
    assert agent_id(chats[0]) is None  # no agent named: "default" is not an agent Loom knows


def test_looms_list_makes_the_default_loom_once():
    first, again = op("looms.list")["looms"], op("looms.list")["looms"]  # a namespace never seen
    assert first == again and [loom["isDefault"] for loom in first] == [True]
    assert datetime.fromisoformat(first[0]["dateCreated"]) <= datetime.now(UTC)


def test_a_search_naming_a_time_lifts_the_threads_learned_then(worker):
    """Memory search is the one hybrid search: a thread is dated when it was learned, and the
    query's time words lift those learned on the days they name."""
    asked = datetime.now(UTC).replace(microsecond=0)
    for days, content in (
        (14, "The team offsite is at the lake cabin in May"),
        (1, "The team offsite is at the lake cabin"),
    ):
        with freeze_time(asked - timedelta(days=days)):
            remember(content)
    wait_until(settled, what="the memories' embeddings")
    when = {"now": asked.isoformat()}
    assert found("Where is the team offsite, as we heard two weeks ago?", **when)[0].endswith("in May")
    assert found("Where is the team offsite, as we heard yesterday?", **when)[0].endswith("cabin")
