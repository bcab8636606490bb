"""The Claude Code plugin (integrations/claude-code/loom) against `loom up`: each hook run as Claude
Code runs it (hooks/hooks.json's command under sh -c, JSON on stdin, CLAUDE_PLUGIN_ROOT and
CLAUDE_PLUGIN_DATA, in a git repository), on transcripts in Claude Code's format, with only what
the README tells a user to set (LOOM_URL, LOOM_TOKEN)."""

import json
import os
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from services.ports import free_port
from tests.e2e.conftest import Loom, running_loom, wait_for
from tests.support.claude_code import MARKETPLACE, PLUGIN, Transcript, claude_cli, git_repo, run_hook
from tests.support.memory_hooks import FREEZE, FREEZE_CUE, as_claude_code_gives_it, injected, mcp_tool, tokens

pytestmark = pytest.mark.e2e

NS = "cc"


@pytest.fixture(scope="module")
def live():
    with running_loom("loom-cc-", recording=(NS,)) as loom:
        yield loom


@pytest.fixture
def user(live, scratch):
    """A user's machine: a git repository to work in, and the environment Claude Code passes on."""
    token = live.cli("tokens", "create", "--namespace", NS, "--role", "writer").strip()
    repo = git_repo(scratch / "billing-service", "git@github.com:acme/billing-service.git", "ledger-move")
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(scratch),
        "LOOM_URL": f"http://127.0.0.1:{live.port}",
        "LOOM_TOKEN": token,
        "CLAUDE_PLUGIN_DATA": str(scratch / "plugin-data"),
    }
    session = str(uuid.uuid4())
    transcript = Transcript(scratch / f"{session}.jsonl", session, repo, "ledger-move")
    return env, repo, transcript


def hook(event: str, user, **extra) -> subprocess.CompletedProcess:
    env, repo, transcript = user
    payload = {"session_id": transcript.session_id, "transcript_path": str(transcript.path), "cwd": str(repo)}
    ran = run_hook(event, payload | extra, env, repo)
    assert ran.returncode == 0, ran.stderr
    return ran


def turns(live: Loom, session: str) -> list[tuple]:
    return live.sql(
        "SELECT msg_id, role, content FROM turns WHERE namespace = %s AND thread_id = %s ORDER BY seq",
        NS,
        session,
    )


def test_stop_stores_each_turn_once_across_repeated_runs_new_lines_and_an_outage(live, user):
    env, repo, t = user
    t.user("Move the invoices to the new ledger.")
    t.thinking_then_text("The ledger module first.", "I'll start with src/ledger.py.")
    t.tool("Read", {"file_path": str(repo / "src/ledger.py")}, "class Ledger: ...")
    t.metadata()
    assert hook("Stop", user).stderr == ""
    hook("Stop", user)  # again, nothing new
    wait_for(lambda: len(turns(live, t.session_id)) == 2, 60, "the first two turns")
    t.user("Now the export job.")
    t.text("Done: the export reads the new ledger.")
    hook("Stop", user)
    wait_for(lambda: len(turns(live, t.session_id)) == 4, 60, "the next two turns")

    live.stop()  # Loom is down: the hook says so in one line and keeps the lines for later
    try:
        t.user("Run the tests.")
        down = hook("Stop", user)
        assert down.stderr.count("\n") == 1 and "cannot reach" in down.stderr
    finally:
        live.up()
    t.text("All 212 tests pass.")
    assert hook("Stop", user).stderr == ""
    wait_for(lambda: len(turns(live, t.session_id)) == 6, 60, "the turns of the outage")
    stored = turns(live, t.session_id)
    assert [role for _, role, _ in stored] == ["user", "assistant"] * 3
    assert len({msg_id for msg_id, _, _ in stored}) == 6  # each entry once
    assert "src/ledger.py" in stored[1][2]


def test_briefs_at_compaction_and_session_end_with_extraction_and_episodes(live, user):
    env, repo, t = user
    token = env["LOOM_TOKEN"]
    t.user("Move the invoices to the new ledger; the export job must keep working.")
    t.text("Plan: change src/ledger.py, then run the ledger tests.")
    edited = {"file_path": str(repo / "src/ledger.py"), "old_string": "a", "new_string": "b"}
    edit = t.tool("Edit", edited, "The file was updated.")
    failing = t.tool(
        "Bash", {"command": "pytest -q tests/test_ledger.py"}, "AssertionError: totals differ", True
    )
    for call_id, name, tool_input, response in (
        (edit, "Edit", edited, {"filePath": edited["file_path"]}),
        (
            failing,
            "Bash",
            {"command": "pytest -q tests/test_ledger.py"},
            {"error": "AssertionError: totals differ"},
        ),
    ):
        hook(
            "PostToolUse",
            user,
            tool_name=name,
            tool_input=tool_input,
            tool_response=response,
            tool_use_id=call_id,
        )
    hook(
        "PostToolUse", user, tool_name="Edit", tool_input=edited, tool_response={}, tool_use_id=edit
    )  # again
    t.compaction("We were moving invoices to the new ledger; the ledger tests fail on totals.")
    assert hook("PreCompact", user, trigger="manual", custom_instructions="").stderr == ""

    key = "auto/billing-service/ledger-move"

    def brief() -> dict:
        return live.op(token, "session.brief_get", {"brief_key": key, "full": True})

    first = wait_for(lambda: (b := brief()).get("revision") == 1 and b, 60, "the brief's first revision")
    assert first["author"] == "deterministic" and first["project"] == "billing-service"
    assert first["sections"]["goal"] and any("src/ledger.py" in f for f in first["sections"]["key_files"])
    assert any("totals differ" in e for e in first["sections"]["errors"])
    assert "the ledger tests fail on totals" in first["client_summary"]
    saves = live.sql("SELECT count(*) FROM session_brief_saves")[0][0]
    hook("PreCompact", user, trigger="auto", custom_instructions="")  # nothing new: nothing written
    assert live.sql("SELECT count(*) FROM session_brief_saves")[0][0] == saves and brief()["revision"] == 1
    note = live.op(token, "working_memory.get", {"project": "billing-service", "branch": "ledger-move"})
    assert note["content"].startswith("Where was I: billing-service/ledger-move")

    t.user("Fix the totals.")
    t.tool("Bash", {"command": "pytest -q tests/test_ledger.py"}, "3 passed")
    t.text("Fixed: totals are summed in cents now.")
    started = time.monotonic()
    hook("SessionEnd", user, reason="other")
    assert time.monotonic() - started < 1.5  # Claude Code's budget for SessionEnd hooks
    wait_for(lambda: brief().get("revision") == 2, 60, "the brief's revision at session end")

    def extraction_kinds() -> set:
        rows = live.sql(
            "SELECT params->>'episodes' FROM stage_runs "
            "WHERE stage = 'extraction' AND params->>'thread_id' = %s",
            t.session_id,
        )
        return {episodes for (episodes,) in rows}

    # The turns' extraction and the episodes: two requests the session end sends one after the
    # other, so the second may land a moment after the first.
    wait_for(lambda: extraction_kinds() == {None, "true"}, 60, "the turns' extraction and the episodes runs")
    episodes = wait_for(
        lambda: (
            live.sql("SELECT content FROM memory_threads WHERE namespace = %s AND kind = 'Episodic'", NS)
            or None
        ),
        60,
        "the session's episodes",
    )
    assert any("billing-service/ledger-move" in content for (content,) in episodes)
    actions = live.sql("SELECT count(*) FROM observations WHERE session_id = %s", t.session_id)[0][0]
    assert actions == 2  # the Edit sent twice is one action


def test_the_session_start_primer_names_the_saved_briefs_and_working_memory_and_no_content(live, user):
    env, repo, t = user
    token = env["LOOM_TOKEN"]
    goal = f"Move invoices {uuid.uuid4().hex[:6]}"
    live.op(
        token,
        "session.brief_save",
        {"project": "billing-service", "branch": "primer", "sections": {"goal": goal}},
    )
    secret_note = f"note {uuid.uuid4().hex[:6]}"
    live.op(
        token,
        "working_memory.set",
        {"project": "billing-service", "branch": "primer", "content": secret_note},
    )
    started = hook("SessionStart", user, source="startup")
    assert (
        "auto/billing-service/primer" in started.stdout
        and "working memory billing-service/primer" in started.stdout
    )
    assert goal not in started.stdout and secret_note not in started.stdout
    assert "loom-session" in started.stdout and started.stderr == ""


def test_recording_off_is_said_once_and_what_was_said_meanwhile_is_never_sent(live, user):
    env, repo, t = user
    quiet = f"quiet-{uuid.uuid4().hex[:6]}"
    live.cli("namespaces", "logging", quiet, "--off")
    env = env | {"LOOM_TOKEN": live.cli("tokens", "create", "--namespace", quiet, "--role", "writer").strip()}
    user = (env, repo, t)
    t.user("Said while recording is off.")
    first = hook("Stop", user)
    assert first.stderr == "loom: recording is off for the token's namespace\n"
    t.user("Also said while it is off.")
    assert hook("Stop", user).stderr == ""  # said once
    live.cli("namespaces", "logging", quiet, "--on")
    # A minute later the cached verdict has lapsed (moved back here, not waited for).
    (verdict,) = Path(env["CLAUDE_PLUGIN_DATA"]).glob("*/verdict.json")
    cached = json.loads(verdict.read_text())
    verdict.write_text(json.dumps(cached | {"at": cached["at"] - 61_000}))
    t.user("Said once recording is back on.")
    assert hook("Stop", user).stderr == ""
    stored = wait_for(
        lambda: live.sql("SELECT content FROM turns WHERE namespace = %s", quiet) or None,
        60,
        "the turn said after",
    )
    assert [content for (content,) in stored] == ["Said once recording is back on."]


def test_claude_codes_own_validator_accepts_the_plugin_and_the_marketplace():
    """`claude plugin validate` (no account needed) from the npm registry's Claude Code."""
    claude = claude_cli()
    for target in (PLUGIN, MARKETPLACE):
        checked = subprocess.run(
            [str(claude), "plugin", "validate", "--strict", str(target)],
            capture_output=True,
            text=True,
            timeout=120,
            env={"PATH": os.environ["PATH"], "HOME": tempfile.mkdtemp()},
        )
        assert checked.returncode == 0 and "Validation passed" in checked.stdout, (
            checked.stdout + checked.stderr
        )


# --- the memory loop: what a session starts with, is offered, keeps and recalls (issue 36) -------

# Short enough to fit any tapestry, and about the project: the tapestry takes it first.
CENTS = "Invoice totals in billing-service are summed in integer cents, never in floats."
PASSWORD = "the staging password is hunter2-Xq9vLp3sTz7R"  # what Loom screens as high
API_KEY = "sk-proj-AbCdEf1234567890GhIjKlMnOpQrStUvWxYz12"


@pytest.fixture
def loop(live, user):
    """The user's machine on a namespace of its own (a loom no other test weaves into), with a
    session start of 200 tokens."""
    env, repo, t = user
    ns = f"loop-{uuid.uuid4().hex[:8]}"
    live.cli("namespaces", "logging", ns, "--on")
    token = live.cli("tokens", "create", "--namespace", ns, "--role", "writer").strip()
    env = env | {"LOOM_TOKEN": token, "LOOM_CONTEXT_TOKENS": "200"}
    return env, repo, t


def remember(live: Loom, token: str, content: str, session: str, **more) -> str:
    stored = live.op(
        token, "memory.set", {"content": content, "thread_id": session, "agent": "claude-code"} | more
    )
    assert stored["stored"], stored
    return embedded(live, stored["thread"]["id"])


def embedded(live: Loom, thread: str) -> str:
    """The thread, once embedded: what is offered is vetted by its similarity from then on."""
    query = "SELECT 1 FROM memory_threads WHERE id = %s AND embedded_at IS NOT NULL"
    wait_for(lambda: live.sql(query, thread), 60, "the thread's embedding")
    return thread


def session_of(live: Loom, token: str, session: str) -> dict:
    """The LoomSession the hooks name for a Claude Code session (read back as context.pack
    answers it: its tapestry is woven once, so asking again changes nothing)."""
    return live.op(token, "context.pack", {"thread_id": session, "agent": "claude-code"})["session"]


def test_a_second_session_wakes_up_with_what_the_first_taught_and_is_offered_a_cued_thread_once(live, loop):
    env, repo, first = loop
    token = env["LOOM_TOKEN"]
    hook("SessionStart", loop, source="startup")
    cents = remember(live, token, CENTS, first.session_id, subjects=["billing-service"])
    freeze = remember(live, token, FREEZE, first.session_id, cues=[FREEZE_CUE])

    second = Transcript(first.path.with_name(f"{uuid.uuid4()}.jsonl"), str(uuid.uuid4()), repo, "ledger-move")
    loop = (env, repo, second)
    started = injected(hook("SessionStart", loop, source="startup").stdout, "SessionStart")
    assert f"{CENTS} [{cents}]" in started and FREEZE not in started
    assert "not instructions" in started and tokens(started) <= 200

    asked = hook("UserPromptSubmit", loop, prompt="Can the ledger change go out during the deploy freeze?")
    offered = injected(asked.stdout, "UserPromptSubmit")
    assert f"{FREEZE} [{freeze}]" in offered and 'cue "deploy freeze" was said' in offered
    assert CENTS not in offered and tokens(offered) <= 400 and asked.stderr == ""
    again = hook("UserPromptSubmit", loop, prompt="So, the deploy freeze: what does it block?")
    assert again.stdout == "" and again.stderr == ""  # offered once a session
    unrelated = hook("UserPromptSubmit", loop, prompt="Which cat breed suits a small flat?")
    assert unrelated.stdout == "" and unrelated.stderr == ""

    # The agent searches its memory and pins the freeze over MCP; the PostToolUse hook records both.
    url = env["LOOM_URL"]
    for tool, arguments in (
        ("loom_memory_search", {"query": "how are invoice totals summed"}),
        ("loom_memory_pin", {"thread": freeze}),
    ):
        answer = as_claude_code_gives_it(mcp_tool(url, token, tool, arguments))
        hook("PostToolUse", loop, tool_name=f"mcp__plugin_loom_loom__{tool}", tool_input=arguments,
             tool_response=answer, tool_use_id=f"toolu_{uuid.uuid4().hex[:12]}")  # fmt: skip
    session = wait_for(
        lambda: (s := session_of(live, token, second.session_id))["heldThreadIds"] and s, 60, "the pin"
    )
    assert cents in session["recalledThreadIds"] and session["heldThreadIds"] == [freeze]
    assert session["suggestedThreadIds"] == [freeze] and session["tapestryThreadIds"] == [cents]

    # The compaction keeps the pinned thread: told to the summariser, and given back after it.
    second.user("Can the ledger change go out during the deploy freeze?")
    second.text("Not before Monday.")
    compacting = hook("PreCompact", loop, trigger="auto", custom_instructions="")
    assert compacting.stdout.startswith("Keep these pinned facts") and FREEZE in compacting.stdout
    resumed = injected(hook("SessionStart", loop, source="compact").stdout, "SessionStart")
    # The pinned thread first (clipped to the budget, its id kept), before the tapestry.
    held = resumed.split("Pinned this session (held through compaction):\n", 1)[1].split("\n", 1)[0]
    assert held.startswith(f"- {FREEZE[:200]}") and held.endswith(f"[{freeze}]") and tokens(resumed) <= 200


def test_no_hook_output_carries_a_secret_and_a_screened_note_says_it_is_withheld(live, loop):
    env, repo, t = loop
    token = env["LOOM_TOKEN"]
    planted = live.op(token, "memory.set", {"content": f"Remember: {PASSWORD}", "cues": ["staging"]})
    assert not planted["stored"]  # screened before it is kept
    note = f"Where was I: rotating the staging key {API_KEY}"
    assert live.op(
        token,
        "working_memory.set",
        {"project": "billing-service", "branch": "ledger-move", "content": note},
    )["withheld"]
    t.user(f"Log in to staging: {PASSWORD}")
    t.tool("Bash", {"command": f"curl -H 'Authorization: Bearer {API_KEY}' https://staging"}, "401", True)
    t.text("The staging key is refused.")
    hook("PostToolUse", loop, tool_name="Bash", tool_input={"command": f"deploy --key {API_KEY}"},
         tool_response={"error": f"refused {API_KEY}"}, tool_use_id="toolu_secret")  # fmt: skip
    hook("SessionEnd", loop, reason="other")  # the session's episodes are crystallized
    wait_for(
        lambda: live.sql("SELECT 1 FROM observations WHERE session_id = %s", t.session_id), 60, "the action"
    )
    later = Transcript(t.path.with_name(f"{uuid.uuid4()}.jsonl"), str(uuid.uuid4()), repo, "ledger-move")
    later.user("Where was I with the staging key?")
    loop = (env, repo, later)
    outputs = [
        hook("SessionStart", loop, source="startup").stdout,
        hook("UserPromptSubmit", loop, prompt="Where was I with the staging key and its password?").stdout,
        hook("PreCompact", loop, trigger="manual", custom_instructions="").stdout,
        hook("SessionStart", loop, source="compact").stdout,
    ]
    assert "withheld" in injected(outputs[0], "SessionStart")
    for output in outputs:
        assert "hunter2" not in output and API_KEY not in output and "sk-proj" not in output


def test_a_prompt_hook_says_nothing_when_loom_is_down_or_slow(loop):
    env, repo, t = loop
    with socket.socket() as silent:  # accepts, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        for url in (f"http://127.0.0.1:{free_port()}", f"http://127.0.0.1:{silent.getsockname()[1]}"):
            started = time.monotonic()
            ran = hook("UserPromptSubmit", (env | {"LOOM_URL": url}, repo, t), prompt="the deploy freeze")
            assert (ran.stdout, ran.stderr) == ("", "") and time.monotonic() - started < 4


REPLICA, REPLICA_CUE = (
    "The ledger replica in billing-service lags up to ten minutes at month end.",
    "ledger replica",
)


def test_a_night_judges_what_the_hooks_offered_by_what_the_agent_used_and_moves_the_weights(live, loop):
    env, repo, t = loop
    token = env["LOOM_TOKEN"]
    hook("SessionStart", loop, source="startup")  # the session's tapestry: woven now, from an empty loom
    freeze = remember(live, token, FREEZE, "another-session", cues=[FREEZE_CUE])
    replica = remember(live, token, REPLICA, "another-session", cues=[REPLICA_CUE])
    said = ""  # what the prompts' hooks put into the agent's context (a thread is offered once a session)
    for prompt in ("Can the ledger change go out during the deploy freeze?", "Does the ledger replica lag?"):
        t.user(prompt)
        said += injected(hook("UserPromptSubmit", loop, prompt=prompt).stdout, "UserPromptSubmit")
        t.text("Looking into it.")
    assert f"[{freeze}]" in said and f"[{replica}]" in said
    # The agent uses the freeze (pins it over MCP; PostToolUse tells the session) and ignores the replica.
    arguments = {"thread": freeze}
    answer = as_claude_code_gives_it(mcp_tool(env["LOOM_URL"], token, "loom_memory_pin", arguments))
    hook("PostToolUse", loop, tool_name="mcp__plugin_loom_loom__loom_memory_pin", tool_input=arguments,
         tool_response=answer, tool_use_id=f"toolu_{uuid.uuid4().hex[:12]}")  # fmt: skip
    hook("Stop", loop)  # the turns reach Loom: the session now awaits the night
    session = wait_for(
        lambda: (s := session_of(live, token, t.session_id))["awaitingNight"] and s["heldThreadIds"] and s,
        60,
        "the session's turns and the pin",
    )
    assert (
        sorted(session["suggestedThreadIds"]) == sorted([freeze, replica]) and not session["judgedThreadIds"]
    )

    live.cli("night-weave", "--wait")
    judged = session_of(live, token, t.session_id)
    assert sorted(judged["judgedThreadIds"]) == sorted([freeze, replica]) and not judged["awaitingNight"]
    weights = {m["id"]: m["weight"] for m in live.op(token, "memory.inspect", {})["threads"]}
    assert weights[freeze] == pytest.approx(0.6) and weights[replica] == pytest.approx(0.45)
    live.cli("night-weave", "--wait")  # a second night judges nothing twice
    again = {m["id"]: m["weight"] for m in live.op(token, "memory.inspect", {})["threads"]}
    assert (again[freeze], again[replica]) == (weights[freeze], weights[replica])
