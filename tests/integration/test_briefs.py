"""Session briefs on the real database, broker, workers and the local LLM server: sections the agent
wrote, events condensed by the worker in windows (the model, the deterministic builder), every
refusal and partial outcome of the document, revisions, compare-and-set, addressing and bounded
tokens. The llm fixture checks that no prompt held a high event."""

import asyncio
import json
import threading
import uuid

import pytest
from mcp import Client
from sqlmodel import col, select
from typer.testing import CliRunner

import cli
from api import mcp
from models import db
from models.stage_run import StageRun
from ops.caller import OPERATOR, create_token
from ops.errors import OpError
from ops.registry import call
from pipelines import briefs
from providers import llm as providers_llm
from tests.support.calls import enable_logging
from tests.support.waits import settled, wait_until

SECRET = "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Rk3Lm9"


@pytest.fixture
def ns(database) -> str:
    return f"briefs-{uuid.uuid4().hex[:8]}"


def op(ns: str, name: str, caller=OPERATOR, **body) -> dict:
    return call(name, caller, {"namespace": ns, **body})


def events(count: int, kind: str = "assistant", width: int = 60) -> list[dict]:
    return [{"kind": kind, "text": f"step {i}: " + "x" * width} for i in range(count)]


def a_revision(request: dict) -> dict:
    prompt = request["messages"][-1]["content"]
    step = prompt.rsplit("step ", 1)[-1].split(":")[0] if "step " in prompt else "?"
    return {
        "goal": "Move invoices to the new ledger",
        "status": f"through step {step}",
        "next_steps": ["update the export job"],
        "new_decisions": [f"decided at step {step}"],
    }


def test_sections_the_agent_wrote_are_the_brief_state_replaced_lists_accumulating(ns):
    first = op(
        ns,
        "session.brief_save",
        project="billing",
        branch="ledger-move",
        sections={"goal": "Move invoices to the new ledger", "next_steps": ["Update the export job"]},
    )
    assert first["brief_key"] == "auto/billing/ledger-move" and first["changed"] and first["revision"] == 1
    assert first["author"] == "model" and first["windows"]["total"] == 0
    decisions = [f"decision {i}" for i in range(25)]
    op(ns, "session.brief_save", brief_key=first["brief_key"], sections={"decisions": decisions[:15]})
    op(
        ns,
        "session.brief_save",
        brief_key=first["brief_key"],
        sections={"decisions": decisions[15:], "next_steps": ["Ship it"], "status": "export job updated"},
    )
    got = op(ns, "session.brief_get", brief_key="auto/billing/ledger-move")
    assert got["revision"] == 3 and got["sections"]["next_steps"] == ["Ship it"]  # state replaced
    assert got["sections"]["decisions"] == decisions[-20:]  # accumulated, the oldest fell off
    assert got["sections"]["goal"] == "Move invoices to the new ledger"  # carried over
    assert (
        got["markdown"].startswith("# Brief auto/billing/ledger-move")
        and "## Next steps\n- Ship it" in got["markdown"]
    )
    older = op(ns, "session.brief_get", brief_key="auto/billing/ledger-move", revision=1)
    assert older["revision"] == 1 and older["sections"]["next_steps"] == ["Update the export job"]


def test_events_are_condensed_by_the_model_one_run_a_window_and_a_high_event_never_sent(
    ns, llm, worker, loom_env
):
    loom_env(LOOM_SESSION_BRIEF_WINDOW_CHARS="600")
    llm.reply = a_revision
    sent = [*events(3), {"kind": "command", "text": SECRET, "command": "env"}, *events(12)[3:]]
    answer = op(ns, "session.brief_save", session_id="s-1", events=sent)
    assert answer["changed"] and answer["author"] == "llm" and answer["reason"] is None, answer
    assert answer["events"] == {"received": 13, "screened_out": 1, "dropped": 0}
    windows = answer["windows"]
    assert (
        windows["total"] >= 2
        and windows["revised"] == windows["total"]
        and answer["revision"] == windows["total"]
    )
    with db.session() as s:
        runs = s.exec(select(StageRun).where(col(StageRun.id).in_(answer["run_ids"]))).all()
    assert len(runs) == windows["total"] and {r.stage for r in runs} == {"brief_window"}
    assert len(llm.chat_calls) == windows["total"]  # once per window
    got = op(ns, "session.brief_get", brief_key="session/s-1")
    assert got["author"] == "llm" and got["sections"]["status"] == "through step 11"
    assert len(got["sections"]["decisions"]) == windows["total"]  # one added by each window


def test_a_window_whose_model_call_failed_is_skipped_while_the_rest_are_revised(ns, llm, worker, loom_env):
    loom_env(LOOM_SESSION_BRIEF_WINDOW_CHARS="600", LOOM_STAGE_MAX_ATTEMPTS="1")
    llm.reply = a_revision
    llm.fail_next(2)  # the first window's call and its one retry
    answer = op(ns, "session.brief_save", brief_key="partly", events=events(12))
    assert answer["changed"] and answer["windows"]["failed"] == 1
    assert answer["windows"]["revised"] == answer["windows"]["total"] - 1 == answer["revision"]


def test_a_save_whose_every_model_call_failed_is_a_503_for_the_client_to_send_again(
    ns, llm, worker, loom_env
):
    loom_env(LOOM_STAGE_MAX_ATTEMPTS="1")
    llm.mode = "fail"
    body = {"brief_key": "down", "session_id": "s-9", "event_cursor": "c-1", "events": events(3)}
    with pytest.raises(OpError) as refused:
        op(ns, "session.brief_save", **body)
    assert refused.value.status == 503
    llm.mode, llm.reply = "ok", a_revision
    again = op(ns, "session.brief_save", **body)  # the same save again is not taken for a repeat
    assert again["changed"] and again["revision"] == 1


@pytest.mark.parametrize("how", ["no-model", "use_llm-false", "model-calls-off"])
def test_events_alone_with_no_model_to_call_write_nothing(how, ns, llm, loom_env):
    body = {"brief_key": "idle", "events": events(2)}
    if how == "no-model":
        loom_env(LOOM_LLM_PROVIDER="fake")
        providers_llm.reset_llm()
    elif how == "use_llm-false":
        body["use_llm"] = False
    else:
        loom_env(LOOM_SESSION_BRIEF_MODEL_CALLS="off")
    answer = op(ns, "session.brief_save", **body)
    assert (answer["changed"], answer["reason"], answer["revision"]) == (False, "not-revised", 0)
    assert not llm.chat_calls
    with pytest.raises(OpError) as missing:
        op(ns, "session.brief_get", brief_key="idle")
    assert missing.value.status == 404


@pytest.mark.parametrize("how", ["no-model", "use_llm-false"])
def test_with_no_model_to_call_a_save_asking_for_the_fallback_is_built_from_its_events(
    how, ns, llm, worker, loom_env
):
    edits = [{"kind": "edit", "text": f"src/{name}.py", "path": f"src/{name}.py"} for name in ("a", "b")]
    body = {"brief_key": "plugin", "events": edits, "deterministic_fallback": True}
    if how == "no-model":
        loom_env(LOOM_LLM_PROVIDER="fake")
        providers_llm.reset_llm()
    else:
        body["use_llm"] = False
    answer = op(ns, "session.brief_save", **body)
    assert answer["changed"] and answer["revision"] == 1 and answer["author"] == "deterministic"
    key_files = op(ns, "session.brief_get", brief_key="plugin")["sections"]["key_files"]
    assert key_files == ["src/b.py", "src/a.py"]  # the newest first
    assert not llm.chat_calls
    loom_env(LOOM_SESSION_BRIEF_MODEL_CALLS="off")  # the operator's switch stops the builder too
    off = op(ns, "session.brief_save", **body | {"brief_key": "plugin-off"})
    assert (off["changed"], off["reason"]) == (False, "not-revised")


def test_switched_off_after_a_window_the_revised_windows_stay(ns, llm, worker, loom_env):
    loom_env(LOOM_SESSION_BRIEF_WINDOW_CHARS="600")

    def then_off(request: dict) -> dict:
        loom_env(LOOM_SESSION_BRIEF_MODEL_CALLS="off")
        return a_revision(request)

    llm.reply = then_off
    answer = op(ns, "session.brief_save", brief_key="halted", events=events(12))
    windows = answer["windows"]
    assert answer["changed"] and (windows["revised"], windows["not_revised"]) == (1, windows["total"] - 1)
    assert len(llm.chat_calls) == 1 and answer["revision"] == 1


def test_without_the_model_the_builder_writes_goal_status_files_errors_pointers(ns, worker, loom_env):
    loom_env(LOOM_SESSION_BRIEF_LLM="off")
    said = [
        {"kind": "user", "text": "Fix the flaky invoice export test"},
        {"kind": "read", "text": "", "path": "billing/export.py"},
        {"kind": "edit", "text": "retry the upload", "path": "billing/upload.py"},
        {"kind": "command", "text": "1 failed", "command": "pytest tests/test_export.py", "exit_code": 1},
        {"kind": "search", "text": "upload timeout"},
        {"kind": "error", "text": "TimeoutError in upload"},
        {"kind": "assistant", "text": "The upload now retries; the test passes locally."},
    ]
    answer = op(ns, "session.brief_save", brief_key="builder", events=said)
    assert answer["changed"] and answer["author"] == "deterministic"
    sections = op(ns, "session.brief_get", brief_key="builder")["sections"]
    assert sections["goal"] == "Fix the flaky invoice export test"
    assert sections["status"] == "The upload now retries; the test passes locally."
    assert sections["key_files"] == ["billing/upload.py", "billing/export.py"]
    assert any("TimeoutError" in e for e in sections["errors"]) and any(
        "exit 1" in e for e in sections["errors"]
    )
    assert "$ pytest tests/test_export.py" in sections["pointers"]
    assert not {"decisions", "dead_ends", "done"} & set(sections)


def test_sections_with_events_write_the_sections_and_read_no_event(ns, llm, worker):
    answer = op(ns, "session.brief_save", brief_key="both", sections={"status": "mine"}, events=events(3))
    assert answer["author"] == "model" and answer["windows"]["total"] == 0 and not llm.chat_calls
    assert op(ns, "session.brief_get", brief_key="both")["sections"] == {"status": "mine"}


def test_a_repeated_save_writes_nothing_and_if_revision_is_compare_and_set(ns):
    body = {"brief_key": "cas", "session_id": "s-1", "event_cursor": "42", "sections": {"status": "one"}}
    assert op(ns, "session.brief_save", **body)["revision"] == 1
    repeated = op(ns, "session.brief_save", **{**body, "sections": {"status": "changed?"}})
    assert (repeated["changed"], repeated["reason"], repeated["revision"]) == (False, "repeated", 1)
    assert op(ns, "session.brief_get", brief_key="cas")["sections"]["status"] == "one"

    outcomes: list[object] = []

    def save(text: str) -> None:
        try:
            outcomes.append(
                op(ns, "session.brief_save", brief_key="cas", if_revision=1, sections={"status": text})
            )
        except OpError as exc:
            outcomes.append(exc.status)

    racing = [threading.Thread(target=save, args=(f"racer {i}",)) for i in range(2)]
    for thread in racing:
        thread.start()
    for thread in racing:
        thread.join(30)
    assert sorted(o if isinstance(o, int) else o["revision"] for o in outcomes) == [2, 409]


def test_get_by_session_and_project_full_appends_the_client_summary_list_and_delete(ns, loom_env, worker):
    loom_env(LOOM_SESSION_BRIEF_LLM="off")
    op(ns, "session.brief_save", project="api", branch="main", session_id="s-a", sections={"goal": "older"})
    summary = "The client's own summary:\nwe moved the ledger; the export job is next."
    saved = op(
        ns,
        "session.brief_save",
        project="api",
        branch="fix",
        session_id="s-b",
        events=[{"kind": "user", "text": "fix the api"}, {"kind": "summary", "text": summary}],
    )
    assert saved["changed"]
    assert op(ns, "session.brief_get", from_session="s-a")["brief_key"] == "auto/api/main"
    newest = op(ns, "session.brief_get", project="api")
    assert newest["brief_key"] == "auto/api/fix" and newest["client_summary"] is None
    full = op(ns, "session.brief_get", project="api", full=True)
    assert full["client_summary"] == summary and full["markdown"].endswith(summary)
    listed = op(ns, "session.brief_list")["briefs"]
    assert [b["brief_key"] for b in listed] == ["auto/api/fix", "auto/api/main"] and listed[1][
        "line"
    ] == "older"
    assert op(ns, "session.brief_delete", brief_key="auto/api/main")["deleted"]
    assert [b["brief_key"] for b in op(ns, "session.brief_list")["briefs"]] == ["auto/api/fix"]
    assert not op(ns, "session.brief_delete", brief_key="auto/api/main")["deleted"]


@pytest.mark.parametrize(
    "body",
    [
        {"sections": {"goal": "no key"}},
        {"brief_key": "has space", "sections": {"goal": "x"}},
        {"brief_key": "-leading", "sections": {"goal": "x"}},
        {"project": "p q", "branch": "b", "sections": {"goal": "x"}},
        {"brief_key": "k", "events": [{"kind": "user", "text": "x"}] * 4001},
        {"brief_key": "k", "events": [{"kind": "decision", "text": "x"}]},
        {"brief_key": "k"},
    ],
)
def test_bad_saves_are_422_naming_what_is_wrong(ns, body):
    with pytest.raises(OpError) as refused:
        op(ns, "session.brief_save", **body)
    assert refused.value.status == 422 and refused.value.reason
    if "events" in body and len(body["events"]) > 4000:
        assert "4000" in refused.value.reason


def test_a_bounded_token_stores_under_its_prefix_and_sees_its_own_keys(ns):
    from ops.caller import authenticate

    ana = authenticate(f"Bearer {create_token([ns], 'writer', 'own_user', read_user_id='ana')}")
    session = authenticate(f"Bearer {create_token([ns], 'writer', 'own_session', read_session_id='s-7')}")
    op(ns, "session.brief_save", caller=ana, brief_key="mine", sections={"goal": "ana's"})
    op(ns, "session.brief_save", caller=session, brief_key="mine", sections={"goal": "the session's"})
    op(ns, "session.brief_save", brief_key="mine", sections={"goal": "the team's"})
    assert op(ns, "session.brief_get", caller=ana, brief_key="mine")["sections"]["goal"] == "ana's"
    assert [b["brief_key"] for b in op(ns, "session.brief_list", caller=ana)["briefs"]] == ["mine"]
    wide = sorted(b["brief_key"] for b in op(ns, "session.brief_list")["briefs"])
    assert wide == ["mine", "~ana~mine", "~~s-7~mine"]
    assert op(ns, "session.brief_get", brief_key="~ana~mine")["sections"]["goal"] == "ana's"
    with pytest.raises(OpError) as tilde:
        op(ns, "session.brief_save", caller=ana, brief_key="~bob~mine", sections={"goal": "x"})
    assert tilde.value.status == 422
    assert op(ns, "session.brief_delete", brief_key="~~s-7~mine")["deleted"]


def bounded(ns: str, scope: str, user: str | None = None, session: str | None = None):
    from ops.caller import authenticate

    return authenticate(
        f"Bearer {create_token([ns], 'writer', scope, read_user_id=user, read_session_id=session)}"
    )


@pytest.mark.parametrize(
    "mine,theirs",
    [
        # a user whose id begins with another's and a "~"
        (("own_user", "a", None), ("own_user", "a~x", None)),
        # a session token of user "a" and the user "a~s"
        (("own_session", "a", "s"), ("own_user", "a~s", None)),
        # the user "_" and a session token pinned to no user
        (("own_user", "_", None), ("own_session", None, "s-9")),
        (("own_session", "_", "s-9"), ("own_session", None, "s-9")),
        # a user's token and a session token of the same user are bounds of their own
        (("own_user", "a", None), ("own_session", "a", "s")),
        # a "%" of an id is not an escape
        (("own_user", "a%7Ex", None), ("own_user", "a~x", None)),
    ],
)
def test_bounded_tokens_whose_ids_collide_see_only_their_own_briefs(ns, mine, theirs):
    me, them = bounded(ns, *mine), bounded(ns, *theirs)
    op(ns, "session.brief_save", caller=them, brief_key="plan", sections={"goal": "theirs"})
    op(ns, "session.brief_save", caller=them, brief_key="x", sections={"goal": "theirs too"})
    assert op(ns, "session.brief_list", caller=me)["briefs"] == []
    with pytest.raises(OpError) as missing:
        op(ns, "session.brief_get", caller=me, brief_key="plan")
    assert missing.value.status == 404
    assert op(ns, "session.brief_delete", caller=me, brief_key="plan")["deleted"] is False
    op(ns, "session.brief_save", caller=me, brief_key="plan", sections={"goal": "mine"})
    assert op(ns, "session.brief_get", caller=me, brief_key="plan")["sections"]["goal"] == "mine"
    assert op(ns, "session.brief_get", caller=them, brief_key="plan")["sections"]["goal"] == "theirs"
    assert sorted(b["brief_key"] for b in op(ns, "session.brief_list", caller=them)["briefs"]) == [
        "plan",
        "x",
    ]


def test_a_persons_erasure_takes_no_brief_of_a_user_whose_id_begins_with_theirs(ns, worker):
    op(ns, "session.brief_save", caller=bounded(ns, "own_user", "a"), brief_key="k", sections={"goal": "a"})
    op(
        ns,
        "session.brief_save",
        caller=bounded(ns, "own_session", "a", "s"),
        brief_key="k",
        sections={"goal": "a"},
    )
    other = bounded(ns, "own_user", "a~x")
    op(ns, "session.brief_save", caller=other, brief_key="k", sections={"goal": "a~x"})
    by_user = call("erasure.request", OPERATOR, {"namespace": ns, "user_id": "a", "wait": True})["run"]
    assert by_user["result"] == {"session_briefs": 2}, by_user
    assert op(ns, "session.brief_get", caller=other, brief_key="k")["sections"]["goal"] == "a~x"


def test_briefs_are_never_embedded_nor_found_by_search(ns, worker):
    enable_logging(ns)
    op(ns, "session.brief_save", brief_key="hidden", sections={"goal": "zanzibar quokka migration"})
    assert not op(ns, "conversation.search", query="zanzibar quokka migration")["hits"]
    assert not op(ns, "memory.search", query="zanzibar quokka migration")["hits"]


def test_a_section_that_reads_as_high_is_not_stored(ns):
    answer = op(ns, "session.brief_save", brief_key="leak", sections={"goal": "ok", "pointers": [SECRET]})
    assert answer["refused_sections"] == ["pointers"]
    assert op(ns, "session.brief_get", brief_key="leak")["sections"] == {"goal": "ok"}


def test_a_rendered_brief_stays_under_the_bound():
    huge = {name: ["y" * 480] * 100 for name in briefs.BY_NAME if briefs.BY_NAME[name].cap}
    huge |= {"goal": "g" * 2000, "status": "s" * 2000}
    fitted = briefs.fitted(briefs.merged({}, huge))
    assert len(briefs.render(fitted)) <= briefs.MAX_CHARS and fitted["goal"] == "g" * 2000


def test_erasure_takes_a_persons_own_briefs_and_a_namespaces_all(ns, worker):
    from ops.caller import authenticate

    ana = authenticate(f"Bearer {create_token([ns], 'writer', 'own_user', read_user_id='ana')}")
    op(ns, "session.brief_save", caller=ana, brief_key="mine", sections={"goal": "ana's"})
    op(ns, "session.brief_save", brief_key="team", sections={"goal": "the team's"})
    by_user = call("erasure.request", OPERATOR, {"namespace": ns, "user_id": "ana", "wait": True})["run"]
    assert by_user["result"] == {"session_briefs": 1}, by_user
    assert [b["brief_key"] for b in op(ns, "session.brief_list")["briefs"]] == ["team"]
    whole = call("erasure.request", OPERATOR, {"namespaces": [ns], "wait": True})["run"]
    assert whole["result"]["session_briefs"] == 1 and not op(ns, "session.brief_list")["briefs"]


def test_the_brief_model_with_its_own_key_revises_instead_of_the_deployments(ns, llm, worker, loom_env):
    loom_env(
        LOOM_SESSION_BRIEF_LLM_MODEL="brief-model",
        LOOM_SESSION_BRIEF_LLM_BASE_URL=llm.base_url,
        LOOM_SESSION_BRIEF_LLM_API_KEY="brief-key",
    )
    providers_llm.reset_llm()
    llm.reply = a_revision
    answer = op(ns, "session.brief_save", brief_key="own-model", events=events(2))
    assert answer["changed"] and llm.chat_models == ["brief-model"]


def test_past_its_wait_a_save_answers_with_the_runs_to_wait_on(ns, llm, worker):
    llm.reply = a_revision
    llm.chat_delay = 1.0
    answer = op(ns, "session.brief_save", brief_key="slow", events=events(2), wait_seconds=0.2)
    assert (answer["changed"], answer["reason"]) == (False, "pending") and answer["run_ids"]
    wait_until(settled, what="the save's window")
    assert op(ns, "session.brief_get", brief_key="slow")["revision"] == 1


def test_loom_brief_saves_prints_markdown_lists_and_deletes(ns, tmp_path):
    runner = CliRunner()
    base = ["--namespace", ns]
    sections = tmp_path / "sections.json"
    sections.write_text(json.dumps({"decisions": ["keep the old ledger read-only"]}))
    saved = runner.invoke(
        cli.app,
        ["brief", "save", *base, "--project", "billing", "--branch", "ledger", "--goal", "Move invoices"]
        + [
            "--next-step",
            "Update the export job",
            "--next-step",
            "Tell finance",
            "--sections",
            str(sections),
        ],
    )
    assert saved.exit_code == 0, saved.output
    assert saved.output.strip() == "auto/billing/ledger: revised, revision 1, by model"
    got = runner.invoke(cli.app, ["brief", "get", *base, "--key", "auto/billing/ledger"])
    assert got.exit_code == 0 and got.output.startswith(
        "# Brief auto/billing/ledger\n\n## Goal\nMove invoices"
    )
    assert "## Next steps\n- Update the export job\n- Tell finance" in got.output
    listed = runner.invoke(cli.app, ["brief", "list", *base])
    assert listed.exit_code == 0 and "auto/billing/ledger  Move invoices" in listed.output
    bad = runner.invoke(cli.app, ["brief", "save", *base, "--key", "no spaces please", "--goal", "x"])
    assert bad.exit_code == 2 and bad.output.count("\n") == 1 and "brief_key" in bad.output
    gone = runner.invoke(cli.app, ["brief", "delete", *base, "--key", "auto/billing/ledger"])
    assert gone.exit_code == 0 and "deleted" in gone.output


def test_on_a_default_install_a_person_or_agent_saving_events_gets_the_deterministic_brief(
    ns, worker, loom_env, tmp_path
):
    """Issue 36 item 8: the op keeps the document's rule (events alone with no model revise
    nothing unless the save asks for the fallback); the CLI and MCP's loom_brief_save ask for it
    as the plugins do, and an option turns it off."""
    loom_env(LOOM_LLM_PROVIDER="fake")
    providers_llm.reset_llm()
    edits = tmp_path / "events.json"
    edits.write_text(json.dumps([{"kind": "edit", "text": "src/ledger.py", "path": "src/ledger.py"}]))
    runner, base = CliRunner(), ["brief", "save", "--namespace", ns, "--events", str(edits)]
    saved = runner.invoke(cli.app, [*base, "--key", "by-hand"])
    assert saved.exit_code == 0, saved.output
    assert saved.output.strip() == "by-hand: revised, revision 1, by deterministic; windows 1/1 revised"
    assert op(ns, "session.brief_get", brief_key="by-hand")["sections"]["key_files"] == ["src/ledger.py"]
    off = runner.invoke(cli.app, [*base, "--key", "by-hand-off", "--no-deterministic-fallback"])
    assert off.exit_code == 0 and off.output.strip() == "by-hand-off: not changed (not-revised), revision 0"
    op_alone = op(ns, "session.brief_save", brief_key="op-alone", events=[{"kind": "edit", "text": "x"}])
    assert (op_alone["changed"], op_alone["reason"]) == (False, "not-revised")

    async def tool(**args) -> dict:
        async with Client(mcp.build(caller=OPERATOR)) as client:
            result = await client.call_tool(
                "loom_brief_save", {"namespace": ns, "events": [{"kind": "edit", "text": "a.py"}]} | args
            )
        assert not result.is_error, result
        return json.loads(result.content[0].text)

    assert asyncio.run(tool(brief_key="by-agent"))["author"] == "deterministic"
    unasked = asyncio.run(tool(brief_key="by-agent-off", deterministic_fallback=False))
    assert (unasked["changed"], unasked["reason"]) == (False, "not-revised")


def test_loom_brief_list_is_a_table_that_fits_and_wraps_between_words(ns):
    # The commands' consoles take COLUMNS when they are made: made now, they read it at each print.
    import commands.console  # noqa: F401

    goal = "Move every invoice of the legacy billing platform to the new ledger before the quarterly close"
    for branch in ("ledger", "a-rather-long-feature-branch-name"):
        op(ns, "session.brief_save", project="billing", branch=branch, sections={"goal": goal})
    runner = CliRunner()
    for columns in (80, 200):
        listed = runner.invoke(cli.app, ["brief", "list", "--namespace", ns], env={"COLUMNS": str(columns)})
        assert listed.exit_code == 0, listed.output
        lines = listed.output.splitlines()
        headers = ["updated", "revision", "brief", "line"] if columns == 200 else ["updated", "brief", "line"]
        assert lines[0].split() == headers, (columns, lines[0])
        assert max(map(len, lines)) <= columns, listed.output
        text = listed.output.split()
        assert {"auto/billing/ledger", "auto/billing/a-rather-long-feature-branch-name"} <= set(text)
        assert set(goal.split()) <= set(text), listed.output  # every word whole: none cut at the edge
