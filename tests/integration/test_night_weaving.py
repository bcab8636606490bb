"""Night weaving on the real database, broker, workers and the local LLM server: the pass and
`loom night-weave`, episodes with their evidence (never a high turn sent or quoted), the
deterministic builder, the judgement of suggested threads, night after night, a night run twice,
and one session's failed run retried alone."""

import json
import threading
import uuid
from datetime import UTC, datetime
from uuid import UUID

from freezegun import freeze_time
from sqlalchemy import text
from typer.testing import CliRunner

import cli
from models import db
from models.memory import NightWeaving
from models.stage_run import FAILED, SUCCEEDED
from ops.caller import OPERATOR
from ops.registry import call
from schedules.night_weaving import weave_night
from schedules.registry import passes
from tests.support.calls import append, enable_logging
from tests.support.waits import settled, wait_until
from workers import ledger
from workers.stages import night_weaving as night_stage

SECRET = "my card is 4111 1111 1111 1111, exp 12/29"


def namespace() -> str:
    name = f"night-{uuid.uuid4().hex[:8]}"
    enable_logging(name)
    return name


def op(ns: str, name: str, **body) -> dict:
    return call(name, OPERATOR, {"namespace": ns, **body})


def conversation(ns: str, chat: str, turns: list[tuple[str, str]], agent: str = "guide") -> None:
    for i, (role, content) in enumerate(turns):
        said = f"2026-11-0{1 + i // 3}T1{i % 10}:00:00Z"
        append(
            ns,
            chat,
            content,
            role=role,
            agent=agent,
            run_id="run-1",
            user_id="dana",
            msg_id=f"{chat}-{i}",
            ts=said,
        )


def session_of(ns: str, chat: str, agent: str = "guide") -> dict:
    return op(ns, "context.pack", thread_id=chat, run_id="run-1", agent=agent)["session"]


def night() -> list[int]:
    sent = weave_night()
    wait_until(settled, what="the night's runs")
    return sent


TALK = [
    ("user", "We should move the weekly sync to Thursdays."),
    ("assistant", "Agreed: the weekly sync moves to Thursdays from next week."),
    ("user", SECRET),
    ("user", "Also, Dana owns the release checklist now."),
]


def episodes_citing(request: dict) -> dict:
    return {
        "episodes": [
            {"content": "Dana moved the weekly sync to Thursdays", "subjects": ["Dana"], "lines": [1, 2]}
        ]
    }


def night_results(weaving_id: str) -> list[dict]:
    with db.session() as s:
        return list(
            s.execute(
                text(
                    "SELECT result FROM stage_runs WHERE stage = 'night_weaving' "
                    "AND params->>'night_weaving_id' = :id ORDER BY id"
                ),
                {"id": weaving_id},
            ).scalars()
        )


def test_a_session_is_woven_into_episodes_and_consolidated(llm, worker):
    llm.reply = episodes_citing
    ns, chat = namespace(), "sync"
    session = session_of(ns, chat)  # the session opens before its turns
    conversation(ns, chat, TALK)
    assert op(ns, "looms.sessions")["sessions"][0]["awaitingNight"] is True
    sent = night()
    assert len(sent) == 1
    assert not any("4111" in m["content"] for call_ in llm.chat_calls for m in call_)
    after = op(ns, "looms.sessions")["sessions"][0]
    assert after["id"] == session["id"] and after["consolidatedUpToSequence"] == after["lastSequence"] == 4
    assert after["awaitingNight"] is False and after["consolidatedByNightWeavingId"]
    [episode] = op(ns, "memory.inspect", kinds=["Episodic"])["threads"]
    assert (episode["basis"], episode["content"]) == ("Woven", "Dana moved the weekly sync to Thursdays")
    assert len(episode["evidenceIds"]) == 2
    with db.session() as s:
        weaving = s.execute(
            text("SELECT sessions, consolidated, episodes, finished_at FROM night_weavings WHERE id = :id"),
            {"id": after["consolidatedByNightWeavingId"]},
        ).one()
    assert weaving[:3] == (1, 1, 1) and weaving.finished_at is not None
    assert night_results(after["consolidatedByNightWeavingId"])[0]["episode_ids"] == [episode["id"]]
    # The same night again: nothing awaits it, nothing is sent, nothing changes.
    assert night() == []
    assert op(ns, "looms.sessions")["sessions"][0] == after


def test_without_a_provider_the_builder_records_who_when_and_the_key_turns(worker):
    ns, chat = namespace(), "builder"
    conversation(ns, chat, TALK)
    session_of(ns, chat)
    night()
    [episode] = op(ns, "memory.inspect", kinds=["Episodic"])["threads"]
    content = episode["content"]
    assert "guide with dana" in content and "2026-11-01" in content
    assert "weekly sync to Thursdays" in content and "release checklist" in content
    assert "4111" not in content


def test_without_a_provider_a_one_turn_session_weaves_one_grammatical_sentence(worker):
    ns, chat = namespace(), "one-turn"
    conversation(ns, chat, [("user", "Remember that the staging bucket moved to eu-west-2.")])
    session_of(ns, chat)
    night()
    [episode] = op(ns, "memory.inspect", kinds=["Episodic"])["threads"]
    assert episode["content"] == (
        "In a conversation of guide with dana on 2026-11-01 at 10:00 UTC (1 turn), dana said "
        '"Remember that the staging bucket moved to eu-west-2."'
    )
    assert len(episode["evidenceIds"]) == 1 and episode["subjects"] == ["dana"]


def test_each_suggested_thread_is_judged_once_used_reinforced_unused_decayed_held_back_left(llm, worker):
    llm.reply = lambda request: {"episodes": []}
    ns, chat = namespace(), "judged"
    used, unused, held_back = (
        op(ns, "memory.set", content=f"thread {name}", weight=0.5)["thread"]["id"] for name in ("a", "b", "c")
    )
    conversation(ns, chat, TALK[:2])
    session = session_of(ns, chat)
    with db.session() as s:  # suggested in the session; one recalled (used), one held back after vetting
        s.execute(
            text(
                "UPDATE loom_sessions SET suggested_thread_ids = CAST(:suggested AS uuid[]), "
                "recalled_thread_ids = CAST(:used AS uuid[]), held_back_thread_ids = CAST(:held AS uuid[]) "
                "WHERE id = :id"
            ),
            {
                "suggested": [used, unused, held_back],
                "used": [used],
                "held": [held_back],
                "id": session["id"],
            },
        )
        s.commit()
    night()

    def weights() -> dict:
        return {t["id"]: t["weight"] for t in op(ns, "memory.inspect")["threads"]}

    assert weights() == {used: 0.6, unused: 0.45, held_back: 0.5}
    woven = op(ns, "looms.sessions")["sessions"][0]
    assert sorted(woven["judgedThreadIds"]) == sorted([used, unused])
    with db.session() as s:  # the night counts them: one used, one unused
        weaving = s.get(NightWeaving, UUID(woven["consolidatedByNightWeavingId"]))
        assert (weaving.judged, weaving.used) == (2, 1)
    [result] = night_results(woven["consolidatedByNightWeavingId"])  # what the night changed, kept
    assert result["reweighed"] == sorted(
        [{"thread": used, "before": 0.5, "after": 0.6}, {"thread": unused, "before": 0.5, "after": 0.45}],
        key=lambda change: change["thread"],
    )
    append(ns, chat, "the next night's turn", agent="guide", run_id="run-1", msg_id="late")
    night()
    assert weights() == {used: 0.6, unused: 0.45, held_back: 0.5}  # judged once


def test_a_long_conversation_is_consolidated_night_after_night(worker, loom_env):
    loom_env(LOOM_NIGHT_WEAVING_MAX_TURNS="3")
    ns, chat = namespace(), "long"
    conversation(ns, chat, [("user", f"point number {i}") for i in range(5)])
    session_of(ns, chat)
    night()
    first = op(ns, "looms.sessions")["sessions"][0]
    assert (first["consolidatedUpToSequence"], first["awaitingNight"]) == (3, True)
    night()
    second = op(ns, "looms.sessions")["sessions"][0]
    assert (second["consolidatedUpToSequence"], second["awaitingNight"]) == (5, False)
    newest, oldest = op(ns, "memory.inspect", kinds=["Episodic"])["threads"]  # each night read its own
    assert "point number 3" in newest["content"] and "point number 0" not in newest["content"]
    assert "point number 0" in oldest["content"] and "point number 3" not in oldest["content"]


def test_the_pass_fires_at_night_and_the_cli_weaves_and_lists(worker):
    with freeze_time("2026-11-30 12:00:00"):
        trigger = passes()["night_weaving"].trigger
        assert trigger.get_next_fire_time(None, datetime.now(UTC)) == datetime(2026, 12, 1, 3, tzinfo=UTC)
    ns, chat = namespace(), "cli"
    conversation(ns, chat, TALK[:2])
    loom = session_of(ns, chat)["loomId"]
    runner = CliRunner()
    woven = runner.invoke(cli.app, ["night-weave", "--loom", loom, "--wait", "--timeout", "60"])
    assert woven.exit_code == 0, woven.output
    assert "sent 1 runs" in woven.output and "1 succeeded" in woven.output
    listed = runner.invoke(cli.app, ["night-weave", "list", "--json"])
    newest = json.loads(listed.output.splitlines()[0])
    assert (newest["loom_id"], newest["by"], newest["consolidated"]) == (loom, "operator", 1)
    bad = runner.invoke(cli.app, ["night-weave", "--loom", "nope"])
    assert bad.exit_code == 2 and "not a loom id" in bad.output


def test_a_session_whose_run_failed_is_retried_alone(llm, worker, loom_env):
    loom_env(LOOM_STAGE_MAX_ATTEMPTS="1")
    ns = namespace()

    def fails_for_quentin(request: dict) -> dict:
        if any("Quentin" in str(message.get("content")) for message in request["messages"]):
            return {"episodes": "not a list"}  # never parses: the run fails
        return {"episodes": [{"content": "An episode of the night", "lines": [1]}]}

    llm.reply = fails_for_quentin
    conversation(ns, "fine", TALK[:2], agent="guide")
    conversation(ns, "broken", [("user", "Quentin renamed the staging bucket.")], agent="scout")
    session_of(ns, "fine", "guide")
    session_of(ns, "broken", "scout")
    sent = night()
    (failed,) = [run_id for run_id in sent if ledger.get(run_id).status == FAILED]
    fine = op(ns, "looms.sessions", agent_name="guide")["sessions"][0]
    broken = op(ns, "looms.sessions", agent_name="scout")["sessions"][0]
    assert fine["awaitingNight"] is False and broken["awaitingNight"] is True

    mended_episode = {"content": "Quentin renamed the staging bucket", "lines": [1]}
    llm.reply = lambda request: {"episodes": [mended_episode]}
    retried = CliRunner().invoke(cli.app, ["runs", "retry", str(failed)])
    assert retried.exit_code == 0, retried.output
    wait_until(settled, what="the retried run")
    assert ledger.get(failed).status == SUCCEEDED
    mended = op(ns, "looms.sessions", agent_name="scout")["sessions"][0]
    assert mended["awaitingNight"] is False and mended["consolidatedUpToSequence"] == 1
    assert op(ns, "looms.sessions", agent_name="guide")["sessions"][0] == fine  # untouched
    episodes = sorted(t["content"] for t in op(ns, "memory.inspect", kinds=["Episodic"])["threads"])
    assert episodes == ["An episode of the night", "Quentin renamed the staging bucket"]


def test_two_sessions_of_one_night_close_at_once_without_a_deadlock(monkeypatch):
    """Each close sets its session's night weaving (a key-share lock on the weaving's row through
    the foreign key) before it counts itself on that row: both reach the count at once here."""
    ns = namespace()
    for chat, agent in (("one", "guide"), ("two", "scout")):
        conversation(ns, chat, TALK[:2], agent=agent)
        session_of(ns, chat, agent)
    loom = op(ns, "looms.list")["looms"][0]["id"]
    runs = weave_night(UUID(loom), "test")
    both_counting, real_count = threading.Barrier(2, timeout=10), night_stage._count

    def count_together(*args, **kwargs):
        both_counting.wait()
        return real_count(*args, **kwargs)

    monkeypatch.setattr(night_stage, "_count", count_together)
    closing = [threading.Thread(target=night_stage.weave, args=([run_id],)) for run_id in runs]
    for thread in closing:
        thread.start()
    for thread in closing:
        thread.join(30)
    assert [(ledger.get(r).status, ledger.get(r).last_error) for r in runs] == [(SUCCEEDED, None)] * 2
    assert not any(session["awaitingNight"] for session in op(ns, "looms.sessions", loom_id=loom)["sessions"])
