"""Claude Code as its hooks meet it: transcript entries in its JSON-lines format (as Claude Code
2.1 writes them: one entry per content block, tool_use and tool_result, thinking, the compaction
boundary and summary, metadata lines without a uuid), and the plugin's hooks run as Claude Code
runs them (the command of hooks/hooks.json under ``sh -c``, JSON on stdin, CLAUDE_PLUGIN_ROOT and
CLAUDE_PLUGIN_DATA set, in the session's directory)."""

import json
import shutil
import subprocess
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest

PLUGIN = Path(__file__).resolve().parents[2] / "integrations" / "claude-code" / "loom"
MARKETPLACE = PLUGIN.parent
CLAUDE_CODE_VERSION = "2.1.197"


def claude_cli() -> Path:
    """The ``claude`` command of Claude Code from the npm registry, installed once into the user's
    cache and kept between runs; the test is skipped where npm is missing."""
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed: Claude Code cannot be installed")
    prefix = Path.home() / ".cache" / "loom-tests" / f"claude-code-{CLAUDE_CODE_VERSION}"
    claude = prefix / "node_modules" / ".bin" / "claude"
    if not claude.exists():
        package = f"@anthropic-ai/claude-code@{CLAUDE_CODE_VERSION}"
        subprocess.run(
            ["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", package],
            check=True,
            capture_output=True,
            timeout=600,
        )
    return claude


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


class Transcript:
    """A session's transcript file, written entry by entry as Claude Code writes it."""

    def __init__(self, path: Path, session_id: str, cwd: Path, branch: str = "main") -> None:
        self.path, self.session_id, self.cwd, self.branch = path, session_id, cwd, branch
        self.parent: str | None = None
        path.write_text("")

    def _entry(self, kind: str, message: dict | None, **extra) -> dict:
        entry = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "type": kind,
            **({"message": message} if message is not None else {}),
            "uuid": str(uuid.uuid4()),
            "timestamp": now(),
            "userType": "external",
            "entrypoint": "cli",
            "cwd": str(self.cwd),
            "sessionId": self.session_id,
            "version": "2.1.197",
            "gitBranch": self.branch,
            **extra,
        }
        self.parent = entry["uuid"]
        return self.write(entry)

    def write(self, entry: dict) -> dict:
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry) + "\n")
        return entry

    def user(self, text: str) -> dict:
        return self._entry("user", {"role": "user", "content": text}, promptId=str(uuid.uuid4()))

    def _assistant(self, block: dict, message_id: str) -> dict:
        message = {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": "claude-opus-4-8",
            "content": [block],
            "stop_reason": "end_turn" if block["type"] == "text" else "tool_use",
            "usage": {"input_tokens": 12, "output_tokens": 7},
        }
        return self._entry("assistant", message)

    def thinking_then_text(self, thinking: str, text: str) -> tuple[dict, dict]:
        """One response: its thinking and its text, each an entry of its own."""
        message_id = f"msg_{uuid.uuid4().hex[:12]}"
        first = self._assistant({"type": "thinking", "thinking": thinking, "signature": "sig"}, message_id)
        return first, self._assistant({"type": "text", "text": text}, message_id)

    def text(self, text: str) -> dict:
        return self._assistant({"type": "text", "text": text}, f"msg_{uuid.uuid4().hex[:12]}")

    def tool(self, name: str, tool_input: dict, result: str, is_error: bool = False) -> str:
        """A tool call and its result; the tool_use id."""
        call_id = f"toolu_{uuid.uuid4().hex[:12]}"
        used = self._assistant(
            {"type": "tool_use", "id": call_id, "name": name, "input": tool_input},
            f"msg_{uuid.uuid4().hex[:12]}",
        )
        block = {"tool_use_id": call_id, "type": "tool_result", "content": result, "is_error": is_error}
        self._entry(
            "user",
            {"role": "user", "content": [block]},
            toolUseResult={"stdout": "" if is_error else result, "stderr": result if is_error else ""},
            sourceToolAssistantUUID=used["uuid"],
        )
        return call_id

    def compaction(self, summary: str) -> None:
        """The compaction boundary and the summary entry that follows it."""
        self.parent = None
        self._entry(
            "system",
            None,
            subtype="compact_boundary",
            content="Conversation compacted",
            isMeta=False,
            level="info",
            compactMetadata={"trigger": "manual", "preTokens": 19000, "postTokens": 617},
        )
        content = f"This session is being continued from a previous conversation.\n\nSummary:\n{summary}"
        self._entry(
            "user",
            {"role": "user", "content": content},
            isVisibleInTranscriptOnly=True,
            isCompactSummary=True,
        )

    def metadata(self) -> None:
        """Lines without a uuid, as Claude Code writes between entries."""
        self.write(
            {"type": "last-prompt", "lastPrompt": "…", "leafUuid": self.parent, "sessionId": self.session_id}
        )
        self.write(
            {
                "type": "queue-operation",
                "operation": "dequeue",
                "timestamp": now(),
                "sessionId": self.session_id,
            }
        )


def hook_command(event: str) -> str:
    """The command hooks/hooks.json gives for an event (one hook an event)."""
    config = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())
    ((group,),) = [config["hooks"][event]]
    (handler,) = group["hooks"]
    assert handler["type"] == "command"
    return handler["command"]


def run_hook(
    event: str, payload: dict, env: dict, cwd: Path, timeout: float = 30
) -> subprocess.CompletedProcess:
    """The hook of ``event`` as Claude Code runs it: its command under ``sh -c``, with the
    client's variables, the hook input on stdin, in the session's directory."""
    given = {"hook_event_name": event, **payload}
    return subprocess.run(
        ["sh", "-c", hook_command(event)],
        input=json.dumps(given),
        env={**env, "CLAUDE_PLUGIN_ROOT": str(PLUGIN), "CLAUDE_PROJECT_DIR": str(cwd)},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def git_repo(path: Path, remote: str, branch: str) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    for args in (
        ["init", "-q"],
        ["config", "user.email", "dev@example.com"],
        ["config", "user.name", "Dev"],
        ["remote", "add", "origin", remote],
        ["checkout", "-q", "-b", branch],
        ["commit", "-q", "--allow-empty", "-m", "start"],
    ):
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True)
    return path
