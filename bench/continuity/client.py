"""Claude Code as the Loom plugin's hooks meet it, for the continuity benchmark: every hook that
``hooks/hooks.json`` gives for an event (its matcher checked against the event's field, as Claude
Code does), run as Claude Code runs it (the command under ``sh -c`` with the client's variables,
the event's JSON on stdin, in the session's directory, the hooks of one event at once), timed, and
what reached the model read back from its stdout.

What reaches the model (Claude Code 2.1, ``/work/tools/research-36.md`` section 1): for
SessionStart, UserPromptSubmit and PostToolUse, ``hookSpecificOutput.additionalContext`` of a JSON
answer whose ``hookEventName`` is the event's; for SessionStart and UserPromptSubmit also plain
stdout (exit 0). Nothing else an event prints reaches it."""

from __future__ import annotations

import json
import re
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

PLUGIN = Path(__file__).resolve().parents[2] / "integrations" / "claude-code" / "loom"
# The event field a matcher is checked against (the others have no matcher).
MATCHED = {
    "SessionStart": "source",
    "SessionEnd": "reason",
    "PreCompact": "trigger",
    "PostToolUse": "tool_name",
}
PLAIN_STDOUT_TO_MODEL = {"SessionStart", "UserPromptSubmit"}
CONTEXT_EVENTS = {"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"}
DEFAULT_TIMEOUT_S = 600  # Claude Code's, when a hook names none
PROMPT_TIMEOUT_S = 30  # UserPromptSubmit is dispatched with this cap
MCP_TOOL = "mcp__plugin_loom_loom__{}"  # how Claude Code names the plugin's MCP tools


@dataclass
class HookRun:
    event: str
    command: str
    seconds: float
    returncode: int | None
    context: str  # what reached the model ("" for none)
    stderr: str


def matches(matcher: str | None, value: str) -> bool:
    if not matcher or matcher == "*":
        return True
    try:
        return re.fullmatch(matcher, value) is not None
    except re.error:
        return matcher == value


def commands(event: str, payload: dict, plugin: Path = PLUGIN) -> list[tuple[str, float]]:
    """The commands hooks.json runs for this event and input, with their timeouts (seconds)."""
    config = json.loads((plugin / "hooks" / "hooks.json").read_text())
    out = []
    for group in config.get("hooks", {}).get(event, []):
        if event in MATCHED and not matches(group.get("matcher"), str(payload.get(MATCHED[event], ""))):
            continue
        for handler in group.get("hooks", []):
            if handler.get("type") != "command":
                continue
            timeout = float(handler.get("timeout") or DEFAULT_TIMEOUT_S)
            out.append(
                (
                    handler["command"],
                    min(timeout, PROMPT_TIMEOUT_S) if event == "UserPromptSubmit" else timeout,
                )
            )
    return out


def has_hook(event: str, plugin: Path = PLUGIN) -> bool:
    return bool(json.loads((plugin / "hooks" / "hooks.json").read_text()).get("hooks", {}).get(event))


def model_context(event: str, stdout: str, returncode: int | None) -> str:
    """What of a hook's stdout Claude Code puts into the model's context."""
    text = stdout.strip()
    if returncode != 0 or not text or event not in CONTEXT_EVENTS:
        return ""
    if text.startswith("{"):
        try:
            answer = json.loads(text)
        except ValueError:
            return text if event in PLAIN_STDOUT_TO_MODEL else ""
        specific = answer.get("hookSpecificOutput") if isinstance(answer, dict) else None
        if isinstance(specific, dict) and specific.get("hookEventName") == event:
            return str(specific.get("additionalContext") or "")
        return ""
    return text if event in PLAIN_STDOUT_TO_MODEL else ""


class Client:
    """One person's Claude Code with the plugin installed: its environment and state folder."""

    def __init__(self, env: dict[str, str], plugin: Path = PLUGIN) -> None:
        self.env, self.plugin = env, plugin
        self.runs: list[HookRun] = []

    def fire(self, event: str, session: Session, **extra) -> list[HookRun]:
        """Every hook of ``event`` at once, as Claude Code runs them; their runs, in order."""
        payload = {
            "session_id": session.id,
            "transcript_path": str(session.transcript.path),
            "cwd": str(session.cwd),
            "permission_mode": "default",
            "hook_event_name": event,
            **extra,
        }
        env = {
            **self.env,
            "CLAUDE_PLUGIN_ROOT": str(self.plugin),
            "CLAUDE_PROJECT_DIR": str(session.cwd),
            "CLAUDE_CODE_SESSION_ID": session.id,
            "CLAUDECODE": "1",
        }
        if event == "SessionStart":
            env["CLAUDE_ENV_FILE"] = str(session.transcript.path.with_suffix(".env"))
        started = []
        for command, timeout in commands(event, payload, self.plugin):
            proc = subprocess.Popen(
                ["sh", "-c", command],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=session.cwd,
                text=True,
            )
            started.append((command, timeout, proc, time.perf_counter()))
        runs = []
        for command, timeout, proc, at in started:
            try:
                out, err = proc.communicate(json.dumps(payload), timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                out, err = proc.communicate()
                err += f"\n(killed after {timeout:.0f} s)"
            run = HookRun(event, command, time.perf_counter() - at, proc.returncode, "", err.strip())
            run.context = model_context(event, out, proc.returncode)
            runs.append(run)
        self.runs.extend(runs)
        return runs

    def send_spool(self) -> None:
        """The plugin's sender (what SessionEnd starts detached) run once, to its end."""
        sender = self.plugin / "hooks" / "loom-send.mjs"
        env = {**self.env, "CLAUDE_PLUGIN_ROOT": str(self.plugin)}
        subprocess.run(
            ["node", str(sender)], env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=60
        )


class Session:
    """A Claude Code session: its id, directory and transcript (tests/support/claude_code's
    Transcript, written entry by entry as Claude Code writes it)."""

    def __init__(self, folder: Path, cwd: Path, branch: str) -> None:
        from tests.support.claude_code import Transcript

        self.id = str(uuid.uuid4())
        self.cwd = cwd
        self.transcript = Transcript(folder / f"{self.id}.jsonl", self.id, cwd, branch)


def tool_response(result: str, error: bool) -> dict:
    return (
        {"error": result, "stderr": result}
        if error
        else {"stdout": result, "stderr": "", "interrupted": False}
    )


def git_repo(path: Path, remote: str, branch: str) -> Path:
    from tests.support.claude_code import git_repo as made

    return made(path, remote, branch)
