"""What the plugins' PostToolUse hook records after one of Loom's MCP tools
(integrations/claude-code/loom/lib/recall.mjs), run by Node on the tool answers as Claude Code
(the structured content as JSON text) and Codex (the MCP result) hand them over."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

RECALL = Path(__file__).resolve().parents[2] / "integrations" / "claude-code" / "loom" / "lib" / "recall.mjs"
A, B, C = (f"{n}1234567-89ab-4cde-8f01-23456789abcd" for n in "abc")
CONFIG = {"agent": "claude-code"}


def recorded(tool_name: str, tool_response, tool_input: dict | None = None) -> dict | None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    given = {
        "session_id": "s-1",
        "tool_name": tool_name,
        "tool_input": tool_input or {},
        "tool_response": tool_response,
    }
    script = (
        f"import {{ recordRequest }} from {json.dumps(RECALL.as_uri())};"
        f"process.stdout.write(JSON.stringify(recordRequest({json.dumps(CONFIG)}, {json.dumps(given)})));"
    )
    ran = subprocess.run(
        ["node", "--input-type=module", "-e", script], capture_output=True, text=True, timeout=30
    )
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout)


def lists(request: dict) -> tuple[list, list, list]:
    assert request["op"] == "memory.session_record"
    assert {k: request["body"][k] for k in ("thread_id", "agent")} == {
        "thread_id": "s-1",
        "agent": "claude-code",
    }
    assert "run_id" not in request["body"]
    return request["body"]["recalled"], request["body"]["seen"], request["body"]["held"]


def test_a_memory_search_is_recalled_as_claude_code_and_codex_hand_it_over():
    hits = {"result": [{"id": A, "content": "x", "kind": "Semantic", "subjects": [B]}, {"id": C}]}
    claude = recorded("mcp__plugin_loom_loom__loom_memory_search", json.dumps(hits))
    codex = recorded(
        "mcp__loom__loom_memory_search", {"content": [], "structuredContent": hits, "isError": False}
    )
    assert lists(claude) == lists(codex) == ([A, C], [], [])  # a subject is not a thread


def test_loom_search_records_its_memory_section_only():
    answer = {"conversation": [{"thread_id": B, "excerpt": "…"}], "memory": [{"id": A}], "briefs": []}
    assert lists(recorded("mcp__plugin_loom_loom__loom_search", json.dumps(answer))) == ([A], [], [])


def test_a_reflection_records_its_cited_threads_recalled_and_the_others_shown_seen():
    knot = {"shared": "billing", "threads": [A, B]}
    tension = {"kind": "supersedes", "threads": [C, A], "newer": A}
    answer = {"answer": "…", "cited": [A], "seen": [B], "knots": [knot], "tensions": [tension]}
    assert lists(recorded("mcp__plugin_loom_loom__loom_reflect", json.dumps(answer))) == ([A], [B, C], [])


def test_a_pin_is_held_and_other_tools_record_nothing():
    pinned = {"id": A, "content": "x", "pinned": True}
    assert lists(recorded("mcp__loom__loom_memory_pin", pinned, {"thread": A})) == ([], [], [A])
    assert (
        recorded("mcp__loom__loom_memory_search", {"content": [], "structuredContent": {"result": []}})
        is None
    )
    refused = {"stored": False, "reason": "sensitive", "id": None}
    assert recorded("mcp__loom__loom_memory_set", refused) is None
    assert recorded("Bash", {"stdout": A}) is None
    assert recorded("mcp__other__search", json.dumps({"id": A})) is None


def test_a_thread_the_agent_set_is_woven():
    request = recorded("mcp__plugin_loom_loom__loom_memory_set", json.dumps({"stored": True, "id": A}))
    assert lists(request) == ([], [], []) and request["body"]["woven"] == [A]
