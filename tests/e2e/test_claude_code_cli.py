"""The Claude Code plugin in the real CLI (npm's @anthropic-ai/claude-code), as a user runs it:
installed through its marketplace (`claude plugin marketplace add`, `claude plugin install`) in a
fresh HOME, then `claude -p` in a git repository with only what the plugin's README tells a user
to set, against `loom up` and a local Anthropic-compatible API (tests/support/anthropic_server.py)
that answers with a tool call, then, given its result, a final answer.

Claude Code writes its transcript from a queue it flushes every 100 ms, and does not flush before
the Stop hooks: a Stop hook that starts quickly reads the transcript without the session's last
lines (a shell hook sees the prompt and the tool call, not the tool result nor the final answer).
Only SessionEnd reads it complete."""

import json
import os
import subprocess
import uuid
from pathlib import Path

import pytest

from tests.e2e.conftest import Loom, running_loom, wait_for
from tests.support.anthropic_server import FakeAnthropic
from tests.support.claude_code import MARKETPLACE, claude_cli, git_repo
from tests.support.memory_hooks import FREEZE, FREEZE_CUE, texts

pytestmark = pytest.mark.e2e

NS = "cc-cli"
SKIP_FLAGS = ("isMeta", "isSidechain", "isCompactSummary")
PROMPT = "Check that the shell works: print hi."
LEAD = "I'll run echo to check the shell."
ANSWER = "The shell works: echo printed hi."


@pytest.fixture(scope="module")
def live():
    with running_loom("loom-cc-cli-", recording=(NS,)) as loom:
        yield loom


@pytest.fixture(scope="module")
def claude():
    return claude_cli()


@pytest.fixture
def api():
    server = FakeAnthropic(
        {"name": "Bash", "input": {"command": "echo hi", "description": "Print hi"}}, ANSWER, LEAD
    )
    yield server.start()
    server.stop()


@pytest.fixture
def machine(live, claude, scratch):
    """A user's machine with the plugin installed from its marketplace: the environment the
    README asks for, and a repository to work in."""
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(scratch),
        "LOOM_URL": f"http://127.0.0.1:{live.port}",
        "LOOM_TOKEN": live.cli("tokens", "create", "--namespace", NS, "--role", "writer").strip(),
    }
    for step in (["marketplace", "add", str(MARKETPLACE)], ["install", "loom@loom-local"]):
        done = subprocess.run(
            [str(claude), "plugin", *step], env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stdout + done.stderr
    repo = git_repo(scratch / "billing-service", "git@github.com:acme/billing-service.git", "main")
    return env, repo


def run_session(
    claude: Path,
    machine,
    api: FakeAnthropic,
    *flags: str,
    prompt: str = PROMPT,
    allowed: str = "Bash(echo hi)",
) -> tuple[subprocess.CompletedProcess, Path]:
    """`claude -p` with the tool call allowed (-p asks no permission); the run and its transcript."""
    env, repo = machine
    projects = Path(env["HOME"]) / ".claude" / "projects"
    before = set(projects.glob("*/*.jsonl"))
    given = env | {
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": "sk-ant-test",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",  # no telemetry nor update checks from a test
    }
    ran = subprocess.run(
        [str(claude), "-p", prompt, "--allowedTools", allowed, *flags],
        env=given,
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=300,
    )
    (transcript,) = set(projects.glob("*/*.jsonl")) - before
    return ran, transcript


def said(transcript: Path) -> list[tuple[str, str, str]]:
    """(uuid, role, text) of each user and assistant entry of the transcript that has text."""
    out = []
    for line in transcript.read_text().splitlines():
        entry = json.loads(line)
        if entry.get("type") not in ("user", "assistant") or any(entry.get(f) for f in SKIP_FLAGS):
            continue
        content = entry["message"]["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        text = "\n\n".join(b["text"].strip() for b in blocks if b.get("type") == "text" and b["text"].strip())
        if text:
            out.append((entry["uuid"], entry["type"], text))
    return out


def stored(live: Loom, transcript: Path, expected: int) -> list[tuple]:
    def rows():
        return live.sql(
            "SELECT msg_id, role, content FROM turns WHERE namespace = %s AND thread_id = %s ORDER BY seq",
            NS,
            transcript.stem,
        )

    try:
        wait_for(lambda: len(rows()) >= expected, 60, f"{expected} turns of session {transcript.stem}")
    except AssertionError:
        pass  # the comparison below says what is missing
    return rows()


def test_each_text_of_claude_p_sessions_with_a_tool_call_is_stored_once(live, claude, machine, api):
    for _ in range(3):
        ran, transcript = run_session(claude, machine, api)
        assert ran.returncode == 0 and ran.stdout.strip() == ANSWER, ran.stdout + ran.stderr
        expected = said(transcript)
        assert [text for _, _, text in expected] == [PROMPT, LEAD, ANSWER]
        assert [tuple(row) for row in stored(live, transcript, len(expected))] == expected


def test_a_session_ended_by_its_turn_limit_before_any_stop_is_stored_all_the_same(live, claude, machine, api):
    # The turn limit ends the session after the tool call: Claude Code runs no Stop hook at all.
    ran, transcript = run_session(claude, machine, api, "--max-turns", "1")
    assert ran.returncode == 1 and "Reached max turns" in ran.stdout + ran.stderr
    expected = said(transcript)
    assert [text for _, _, text in expected] == [PROMPT, LEAD]
    assert [tuple(row) for row in stored(live, transcript, len(expected))] == expected


SEARCH = "mcp__plugin_loom_loom__loom_memory_search"  # Loom's MCP tool as Claude Code names it
TOTALS = "Invoice totals in billing-service are summed in integer cents, never in floats."


def test_a_claude_p_session_wakes_up_knowing_is_offered_a_cued_thread_and_its_search_is_recalled(
    live, claude, machine, scratch
):
    """What a first session taught (as memory threads: extraction needs a model) reaches the model's
    context in the next: the tapestry from SessionStart and the cued thread, with its receipt, from
    UserPromptSubmit; the model's search through the plugin's MCP server is recorded as recalled on
    the session (the PostToolUse hook reads Claude Code's answer of the tool)."""
    env, repo = machine
    ns = f"cli-loop-{uuid.uuid4().hex[:8]}"
    live.cli("namespaces", "logging", ns, "--on")
    token = live.cli("tokens", "create", "--namespace", ns, "--role", "writer").strip()
    env = env | {"LOOM_TOKEN": token, "LOOM_CONTEXT_TOKENS": "200"}
    taught = str(uuid.uuid4())
    totals = live.op(
        token, "memory.set", {"content": TOTALS, "subjects": ["billing-service"], "thread_id": taught}
    )
    freeze = live.op(token, "memory.set", {"content": FREEZE, "cues": [FREEZE_CUE], "thread_id": taught})
    query = "SELECT 1 FROM memory_threads WHERE id = %s AND embedded_at IS NOT NULL"
    ids = [totals["thread"]["id"], freeze["thread"]["id"]]
    wait_for(lambda: all(live.sql(query, i) for i in ids), 60, "the threads' embeddings")
    api = FakeAnthropic(
        {"name": SEARCH, "input": {"query": "invoice totals"}}, "Totals are in cents."
    ).start()
    try:
        ran, transcript = run_session(
            claude,
            (env, repo),
            api,
            prompt="Before the deploy freeze: how are totals summed?",
            allowed=SEARCH,
        )
    finally:
        api.stop()
    assert ran.returncode == 0 and ran.stdout.strip() == "Totals are in cents.", ran.stdout + ran.stderr
    first = next(request for request in api.requests if request.get("tools"))
    assert SEARCH in {tool["name"] for tool in first["tools"]}
    given = texts(first)
    assert f"{TOTALS} [{totals['thread']['id']}]" in given and "not instructions" in given
    assert f"{FREEZE} [{freeze['thread']['id']}]" in given and f'cue "{FREEZE_CUE}" was said' in given
    pack = {"thread_id": transcript.stem, "agent": "claude-code"}
    session = wait_for(
        lambda: (s := live.op(token, "context.pack", pack)["session"])["recalledThreadIds"] and s,
        60,
        "the search recorded as recalled",
    )
    assert session["recalledThreadIds"] == [totals["thread"]["id"]]
    assert session["suggestedThreadIds"] == [freeze["thread"]["id"]]


SET = "mcp__plugin_loom_loom__loom_memory_set"


def test_a_thread_claude_sets_through_the_plugins_mcp_server_is_woven_in_its_session(
    live, claude, machine, scratch
):
    """The model remembers a fact through the plugin's MCP tool; Claude Code hands the tool's answer
    to the PostToolUse hook, which records the new thread as woven in the session."""
    env, repo = machine
    ns = f"cli-woven-{uuid.uuid4().hex[:8]}"
    live.cli("namespaces", "logging", ns, "--on")
    token = live.cli("tokens", "create", "--namespace", ns, "--role", "writer").strip()
    api = FakeAnthropic({"name": SET, "input": {"content": TOTALS}}, "Noted.").start()
    try:
        mine = ({**env, "LOOM_TOKEN": token}, repo)
        said = "Remember how invoice totals are summed."
        ran, transcript = run_session(claude, mine, api, prompt=said, allowed=SET)
    finally:
        api.stop()
    assert ran.returncode == 0 and ran.stdout.strip() == "Noted.", ran.stdout + ran.stderr
    [thread] = live.op(token, "memory.inspect", {})["threads"]
    assert thread["content"] == TOTALS
    pack = {"thread_id": transcript.stem, "agent": "claude-code"}
    session = wait_for(
        lambda: (s := live.op(token, "context.pack", pack)["session"])["wovenThreadIds"] and s,
        60,
        "the thread recorded as woven",
    )
    assert session["wovenThreadIds"] == [thread["id"]] and thread["id"] in session["knownThreadIds"]
