"""The Codex integration (integrations/codex/loom-codex.mjs) against `loom up`: run as Codex runs
its `notify` program (the configured argv plus the notification's JSON as the last argument) and
its hooks (JSON on stdin), and as the person runs `end`, on rollout files in Codex's format, with
only what the README tells a user to set."""

import json
import os
import shutil
import subprocess
import uuid
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import Loom, running_loom, wait_for
from tests.support.claude_code import git_repo
from tests.support.codex.responses_server import FakeResponses
from tests.support.memory_hooks import FREEZE, FREEZE_CUE, injected, mcp_tool, texts, tokens

pytestmark = pytest.mark.e2e

SCRIPT = Path(__file__).resolve().parents[2] / "integrations" / "codex" / "loom-codex.mjs"
NOTIFY = ["node", str(SCRIPT), "notify"]  # the `notify` setting of the README
NS = "codex"


@pytest.fixture(scope="module")
def live():
    with running_loom("loom-codex-", recording=(NS,)) as loom:
        yield loom


class Rollout:
    """A Codex session's rollout file, written record by record as Codex 0.171 writes them."""

    def __init__(self, codex_home: Path, cwd: Path) -> None:
        self.session = str(uuid.uuid4())
        day = datetime.now().strftime("%Y/%m/%d")
        stamp = datetime.now().strftime("%Y-%m-%dT%H-%M-%S")
        self.path = codex_home / "sessions" / day / f"rollout-{stamp}-{self.session}.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.ordinal = 0
        meta = {"id": self.session, "session_id": self.session, "cwd": str(cwd), "cli_version": "0.171.0"}
        self.record("session_meta", meta | {"base_instructions": {"text": "You are a coding agent…"}})

    def record(self, kind: str, payload: dict, **extra) -> None:
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        line = {"timestamp": stamp, "ordinal": self.ordinal, "type": kind, "payload": payload, **extra}
        self.ordinal += 1
        with self.path.open("a") as fh:
            fh.write(json.dumps(line) + "\n")

    def user(self, text: str) -> None:
        kinds = {"content_item_kinds": ["user.text"]}
        self.record(
            "response_item",
            {"type": "message", "id": f"msg_{uuid.uuid4()}", "role": "user",
             "content": [{"type": "input_text", "text": text}],
             "internal_chat_message_metadata_passthrough": kinds},
        )  # fmt: skip

    def harness(self) -> None:
        kinds = {"content_item_kinds": ["environments.environment_context"]}
        self.record(
            "response_item",
            {"type": "message", "id": f"msg_{uuid.uuid4()}", "role": "user",
             "content": [{"type": "input_text", "text": "<environment_context>\n  <cwd>/repo</cwd>"}],
             "internal_chat_message_metadata_passthrough": kinds},
        )  # fmt: skip

    def assistant(self, text: str) -> None:
        content = [{"type": "output_text", "text": text}]
        self.record(
            "response_item", {"type": "message", "id": "msg_1", "role": "assistant", "content": content}
        )

    def command(self, cmd: str, code: int, output: str) -> None:
        call = f"call_{uuid.uuid4().hex[:8]}"
        args = json.dumps({"cmd": cmd})
        self.record(
            "response_item",
            {"type": "function_call", "name": "exec_command", "arguments": args, "call_id": call},
        )
        text = (
            f"Chunk ID: 0963cd\nWall time: 0.19 seconds\nProcess exited with code {code}\nOutput:\n{output}\n"
        )
        self.record("response_item", {"type": "function_call_output", "call_id": call, "output": text})

    def patch(self, path: str) -> None:
        call = f"call_{uuid.uuid4().hex[:8]}"
        patch = f"*** Begin Patch\n*** Update File: {path}\n@@\n-a\n+b\n*** End Patch\n"
        self.record(
            "response_item",
            {"type": "custom_tool_call", "call_id": call, "name": "apply_patch", "input": patch},
        )
        self.record(
            "response_item", {"type": "custom_tool_call_output", "call_id": call, "output": "Success."}
        )

    def turn_done(self) -> None:
        self.record(
            "event_msg", {"type": "token_count", "info": {"total_token_usage": {"total_tokens": 120}}}
        )
        self.record("event_msg", {"type": "task_complete", "turn_id": "t", "last_agent_message": "done"})


@pytest.fixture
def codex(live, scratch):
    token = live.cli("tokens", "create", "--namespace", NS, "--role", "writer").strip()
    repo = git_repo(scratch / "ledger-api", "https://github.com/acme/ledger-api.git", "fix-totals")
    home = scratch / "codex-home"
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(scratch),
        "CODEX_HOME": str(home),
        "LOOM_URL": f"http://127.0.0.1:{live.port}",
        "LOOM_TOKEN": token,
    }
    return env, repo, Rollout(home, repo)


def run(codex, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    """The script as Codex (or the person) starts it, in the session's repository."""
    env, repo, _ = codex
    ran = subprocess.run(
        ["node", str(SCRIPT), *args],
        input=stdin,
        env=env,
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr
    return ran


def notify(codex, messages: list[str]) -> subprocess.CompletedProcess:
    """As Codex runs its `notify` program: the configured argv, the notification's JSON last."""
    _, repo, rollout = codex
    note = {"type": "agent-turn-complete", "thread-id": rollout.session, "turn-id": "t", "cwd": str(repo),
            "client": "codex_exec", "input-messages": messages, "last-assistant-message": "done"}  # fmt: skip
    return run(codex, *NOTIFY[2:], json.dumps(note))


def op(codex, name: str, body: dict) -> dict:
    env, _, _ = codex
    headers = {"Authorization": f"Bearer {env['LOOM_TOKEN']}"}
    answer = httpx.post(f"{env['LOOM_URL']}/v1/{name}", json=body, headers=headers, timeout=30)
    assert answer.status_code < 500, answer.text
    return answer.json()


def turns(live: Loom, session: str) -> list[tuple]:
    return live.sql(
        "SELECT msg_id, role, content FROM turns WHERE namespace = %s AND thread_id = %s ORDER BY seq",
        NS,
        session,
    )


def test_notify_captures_each_turn_once_and_records_the_tool_actions(live, codex):
    env, repo, rollout = codex
    rollout.harness()
    rollout.user("The invoice totals are off by a cent.")
    rollout.command("pytest -q tests/test_totals.py", 1, "FAILED tests/test_totals.py::test_cents")
    rollout.patch("src/totals.py")
    rollout.assistant("Rounded in cents; the test passes now.")
    rollout.turn_done()
    assert notify(codex, ["The invoice totals are off by a cent."]).stderr == ""
    notify(codex, ["The invoice totals are off by a cent."])  # again: nothing new
    rollout.user("Thanks, now the export.")
    rollout.assistant("The export uses the same rounding.")
    rollout.turn_done()
    notify(codex, ["The invoice totals are off by a cent.", "Thanks, now the export."])
    stored = wait_for(
        lambda: (rows := turns(live, rollout.session)) and len(rows) == 4 and rows, 60, "four turns"
    )
    assert [role for _, role, _ in stored] == ["user", "assistant", "user", "assistant"]
    assert stored[0][2] == "The invoice totals are off by a cent." and len({m for m, _, _ in stored}) == 4
    actions = live.sql(
        "SELECT tool, outcome, files FROM observations WHERE session_id = %s ORDER BY ts", rollout.session
    )
    assert actions == [("exec_command", "error", []), ("apply_patch", "ok", ["src/totals.py"])]


def test_end_saves_the_brief_and_hands_the_session_to_extraction_and_episodes(live, codex):
    env, repo, rollout = codex
    rollout.user("Make the totals exact.")
    rollout.command("pytest -q", 1, "AssertionError: 10.01 != 10.00")
    rollout.patch("src/totals.py")
    rollout.assistant("Totals are exact now.")
    rollout.turn_done()
    assert run(codex, "end", rollout.session).stdout == f"loom: session {rollout.session} saved\n"

    def brief() -> dict:
        return op(codex, "session.brief_get", {"brief_key": "auto/ledger-api/fix-totals"})

    saved = wait_for(lambda: (b := brief()).get("revision") == 1 and b, 60, "the brief")
    assert "src/totals.py" in saved["sections"]["key_files"] and any(
        "10.01" in e for e in saved["sections"]["errors"]
    )
    runs = wait_for(
        lambda: (
            live.sql(
                "SELECT params->>'episodes' FROM stage_runs "
                "WHERE stage = 'extraction' AND params->>'thread_id' = %s",
                rollout.session,
            )
            or None
        ),
        60,
        "the extraction runs",
    )
    assert sorted(str(e) for (e,) in runs) == ["None", "true"]
    run(codex, "end", rollout.session)
    assert brief()["revision"] == 1  # nothing new: nothing written


def test_the_session_start_hook_prints_the_primer(live, codex):
    _, repo, rollout = codex
    op(
        codex,
        "session.brief_save",
        {"project": "ledger-api", "branch": "primer", "sections": {"goal": "secret goal"}},
    )
    stdin = json.dumps({"session_id": rollout.session, "transcript_path": str(rollout.path), "cwd": str(repo),
                        "hook_event_name": "SessionStart", "source": "startup"})  # fmt: skip
    started = run(codex, "hook", stdin=stdin)
    assert "auto/ledger-api/primer" in started.stdout and "secret goal" not in started.stdout
    # In Codex's words: its MCP tool loads a brief (the loom-session skill is Claude Code's alone).
    assert "loom_brief_get" in started.stdout and "skill" not in started.stdout, started.stdout


# Short, and about the project: any tapestry of the repository takes it first.
TOTALS = "In ledger-api, invoice totals are rounded half-even to whole cents."


def loop_env(live: Loom, env: dict) -> dict:
    """The environment on a namespace of its own (a loom no other test weaves into), with a session
    start of 200 tokens."""
    ns = f"codex-loop-{uuid.uuid4().hex[:8]}"
    live.cli("namespaces", "logging", ns, "--on")
    token = live.cli("tokens", "create", "--namespace", ns, "--role", "writer").strip()
    return env | {"LOOM_TOKEN": token, "LOOM_CONTEXT_TOKENS": "200"}


def teach(live: Loom, codex, session: str) -> tuple[str, str]:
    """What a first session taught, as memory threads (extraction needs a model): the ids of TOTALS
    and of FREEZE (cued), once embedded (what is offered is vetted by its similarity from then on)."""
    ids = []
    for content, more in ((TOTALS, {"subjects": ["ledger-api"]}), (FREEZE, {"cues": [FREEZE_CUE]})):
        stored = op(codex, "memory.set", {"content": content, "thread_id": session, "agent": "codex"} | more)
        assert stored["stored"], stored
        ids.append(stored["thread"]["id"])
    query = "SELECT 1 FROM memory_threads WHERE id = %s AND embedded_at IS NOT NULL"
    wait_for(lambda: all(live.sql(query, thread) for thread in ids), 60, "the threads' embeddings")
    return ids[0], ids[1]


def codex_hook(codex, event: str, **fields) -> subprocess.CompletedProcess:
    """The hook command of the README as Codex runs it: its input (Codex's fields) on stdin."""
    _, repo, rollout = codex
    given = {"session_id": rollout.session, "transcript_path": str(rollout.path), "cwd": str(repo),
             "hook_event_name": event, "model": "gpt-5.1-codex", "permission_mode": "default"}  # fmt: skip
    return run(codex, "hook", stdin=json.dumps(given | fields))


def test_the_memory_hooks_start_offer_record_and_give_back_what_was_pinned(live, codex):
    env, repo, rollout = codex
    codex = (loop_env(live, env), repo, rollout)
    totals, freeze = teach(live, codex, str(uuid.uuid4()))

    started = injected(codex_hook(codex, "SessionStart", source="startup").stdout, "SessionStart")
    assert f"{TOTALS} [{totals}]" in started and FREEZE not in started and tokens(started) <= 200
    asked = codex_hook(codex, "UserPromptSubmit", turn_id="t1", prompt="Is the deploy freeze on today?")
    offered = injected(asked.stdout, "UserPromptSubmit")
    assert f"{FREEZE} [{freeze}]" in offered and f'cue "{FREEZE_CUE}" was said' in offered
    assert codex_hook(codex, "UserPromptSubmit", turn_id="t2", prompt="The deploy freeze again?").stdout == ""
    assert (
        codex_hook(
            codex, "UserPromptSubmit", turn_id="t3", prompt="Which cat breed suits a small flat?"
        ).stdout
        == ""
    )

    # Codex names an MCP tool mcp__<server>__<tool>; its answer is handed over as the MCP result.
    url, token = codex[0]["LOOM_URL"], codex[0]["LOOM_TOKEN"]
    for tool, arguments in (
        ("loom_memory_search", {"query": "invoice rounding"}),
        ("loom_memory_pin", {"thread": freeze}),
    ):
        result = mcp_tool(url, token, tool, arguments)
        called = {"tool_name": f"mcp__loom__{tool}", "tool_input": arguments, "tool_response": result}
        ran = codex_hook(
            codex, "PostToolUse", turn_id="t4", tool_use_id=f"call_{uuid.uuid4().hex[:8]}", **called
        )
        assert ran.stdout == "" and ran.stderr == ""
    pack = {"thread_id": rollout.session, "agent": "codex"}
    session = wait_for(
        lambda: (s := op(codex, "context.pack", pack)["session"])["heldThreadIds"] and s, 60, "the pin"
    )
    assert totals in session["recalledThreadIds"] and session["heldThreadIds"] == [freeze]

    # Codex's compaction cannot be steered: PreCompact adds nothing, the start after it gives it back.
    rollout.user("Is the deploy freeze on today?")
    rollout.assistant("Yes, until Monday.")
    assert codex_hook(codex, "PreCompact", turn_id="t5", trigger="auto").stdout == ""
    resumed = injected(codex_hook(codex, "SessionStart", source="compact").stdout, "SessionStart")
    held = resumed.split("Pinned this session (held through compaction):\n", 1)[1].split("\n", 1)[0]
    assert held.startswith(f"- {FREEZE[:200]}") and held.endswith(f"[{freeze}]") and tokens(resumed) <= 200


def codex_cli() -> Path:
    """The ``codex`` command from the npm registry, kept in the user's cache between runs; the test
    is skipped where npm is missing."""
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed: Codex cannot be installed")
    prefix = Path.home() / ".cache" / "loom-tests" / "codex-0.171.0"
    codex_bin = prefix / "node_modules" / ".bin" / "codex"
    if not codex_bin.exists():
        npm = ["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "@openai/codex@0.171.0"]
        subprocess.run(npm, check=True, capture_output=True, timeout=900)
    return codex_bin


def readme_block(language: str) -> str:
    """The README's first block of ``language``, with this repository's path in it."""
    readme = (SCRIPT.parent / "README.md").read_text()
    block = readme.split(f"```{language}\n", 1)[1].split("```", 1)[0]
    return block.replace("/path/to/loom", str(SCRIPT.parents[2]))


def test_codex_reads_the_readmes_config_without_an_account(scratch):
    """`codex mcp list` (no account, no network) type-checks config.toml."""
    codex_bin = codex_cli()
    home = scratch / "codex-home"
    home.mkdir()
    (home / "config.toml").write_text(readme_block("toml"))
    env = {"PATH": os.environ["PATH"], "HOME": str(scratch), "CODEX_HOME": str(home)}
    listed = subprocess.run(
        [str(codex_bin), "mcp", "list", "--json"], env=env, capture_output=True, text=True, timeout=120
    )
    assert listed.returncode == 0, listed.stderr
    (loom,) = [server for server in json.loads(listed.stdout) if server["name"] == "loom"]
    assert (
        loom["transport"]["url"].endswith("/mcp")
        and loom["transport"]["bearer_token_env_var"] == "LOOM_TOKEN"
    )


def codex_home(home: Path, api: FakeResponses, live: Loom) -> Path:
    """CODEX_HOME as the README sets it up (its config's MCP table at this Loom, its hooks), with
    the local Responses API as the model provider."""
    home.mkdir()
    provider = (
        f'[model_providers.local]\nname = "local"\nbase_url = "{api.url}"\nenv_key = "OPENAI_API_KEY"\n'
    )
    config = readme_block("toml").replace("http://127.0.0.1:7777", f"http://127.0.0.1:{live.port}")
    (home / "config.toml").write_text(
        f'model = "gpt-5.1-codex"\nmodel_provider = "local"\n{config}\n{provider}'
    )
    (home / "hooks.json").write_text(readme_block("json"))
    return home


def codex_exec(
    codex_bin, prompt: str, env: dict, repo: Path, api: FakeResponses
) -> subprocess.CompletedProcess:
    """One `codex exec` of the prompt in the repository (its hooks trusted, as the person trusts
    them); the model's server is stopped after it, whatever happens."""
    try:
        return subprocess.run(
            [str(codex_bin), "exec", "-s", "danger-full-access", "--dangerously-bypass-hook-trust", prompt],
            env=env,
            cwd=repo,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        api.stop()


def test_a_real_codex_exec_session_is_stored_once_through_notify_and_the_session_end(live, scratch):
    """`codex exec` against a local Responses API (a shell call, then the answer), set up as the
    README says: its notify program, its MCP table (at this Loom), its hooks (trusted here by
    --dangerously-bypass-hook-trust, as the person trusts them). Codex writes the rollout before
    it runs notify or the hooks, and notify and SessionEnd capture from one offset: each turn once."""
    codex_bin = codex_cli()
    api = FakeResponses("echo hi", "The shell works: echo printed hi.").start()
    # A branch of its own: its SessionEnd saves the brief auto/ledger-api/<branch>, which another
    # test of the module, run after it in a random order, would find at revision 2.
    repo = git_repo(scratch / "ledger-api", "https://github.com/acme/ledger-api.git", "real-exec")
    home = codex_home(scratch / "codex-home", api, live)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(scratch),
        "CODEX_HOME": str(home),
        "LOOM_URL": f"http://127.0.0.1:{live.port}",
        "LOOM_TOKEN": live.cli("tokens", "create", "--namespace", NS, "--role", "writer").strip(),
        "OPENAI_API_KEY": "sk-test",
    }
    prompt = "Check that the shell works: print hi."
    ran = codex_exec(codex_bin, prompt, env, repo, api)
    assert ran.returncode == 0 and ran.stdout.strip() == "The shell works: echo printed hi.", ran.stderr
    assert len(api.requests) == 2  # the shell call, then the answer
    (rollout,) = (home / "sessions").glob("*/*/*/rollout-*.jsonl")
    session = rollout.stem[-36:]  # rollout-<time>-<session id>.jsonl
    wait_for(
        lambda: live.sql(
            "SELECT 1 FROM stage_runs WHERE stage = 'extraction' AND params->>'thread_id' = %s", session
        ),
        60,
        "the extraction the SessionEnd hook asks for",
    )  # sent after the SessionEnd's capture, in the spool's order
    rows = wait_for(lambda: (r := turns(live, session)) and len(r) >= 2 and r, 60, "the session's turns")
    assert [(role, content) for _, role, content in rows] == [
        ("user", prompt),
        ("assistant", "The shell works: echo printed hi."),
    ]
    actions = live.sql("SELECT tool, summary FROM observations WHERE session_id = %s", session)
    assert actions == [("exec_command", "echo hi")]


def test_a_real_codex_exec_session_starts_with_the_tapestry_is_offered_the_cued_thread_and_recalls(
    live, scratch
):
    """`codex exec` set up as the README says, on a loom a first session taught: the model's first
    request carries the tapestry (SessionStart) and the thread the prompt's cue brings back, with its
    receipt (UserPromptSubmit); the model's search through Loom's MCP tool (Codex names it
    mcp__loom__loom_memory_search and hands PostToolUse the MCP result) is recalled in the session."""
    codex_bin = codex_cli()
    search = {
        "namespace": "mcp__loom",
        "name": "loom_memory_search",
        "arguments": {"query": "invoice totals"},
    }
    api = FakeResponses("echo hi", "Totals are rounded half-even.", search).start()
    repo = git_repo(scratch / "ledger-api", "https://github.com/acme/ledger-api.git", "real-memory")
    home = codex_home(scratch / "codex-home", api, live)
    base = {"PATH": os.environ["PATH"], "HOME": str(scratch), "CODEX_HOME": str(home),
            "LOOM_URL": f"http://127.0.0.1:{live.port}", "OPENAI_API_KEY": "sk-test"}  # fmt: skip
    env = loop_env(live, base)
    totals, freeze = teach(live, (env, repo, None), str(uuid.uuid4()))
    brief = {"project": "ledger-api", "branch": "primer-words", "sections": {"goal": "Round totals"}}
    op((env, repo, None), "session.brief_save", brief)
    prompt = "Before the deploy freeze: how are invoice totals rounded?"
    ran = codex_exec(codex_bin, prompt, env, repo, api)
    assert ran.returncode == 0 and ran.stdout.strip() == "Totals are rounded half-even.", ran.stderr
    given = texts(api.requests[0])
    assert f"{TOTALS} [{totals}]" in given and "not instructions" in given
    assert f"{FREEZE} [{freeze}]" in given and f'cue "{FREEZE_CUE}" was said' in given
    # The primer names the project's brief in Codex's words: its MCP tool, not Claude Code's skill.
    assert "- brief auto/ledger-api/primer-words" in given, given
    assert "loom_brief_get" in given and "loom-session" not in given, given
    (rollout,) = (home / "sessions").glob("*/*/*/rollout-*.jsonl")
    pack = {"thread_id": rollout.stem[-36:], "agent": "codex"}
    session = wait_for(
        lambda: (s := op((env, repo, None), "context.pack", pack)["session"])["recalledThreadIds"] and s,
        60,
        "the search recorded as recalled",
    )
    assert totals in session["recalledThreadIds"] and session["suggestedThreadIds"] == [freeze]
