#!/usr/bin/env python3
"""Claude Code Stop hook: append the session's new turns to Loom.

Stdlib only, Python 3.9+. Claude Code passes {"session_id", "transcript_path", ...} on stdin; the
transcript is JSON lines, one entry per line. Each user/assistant entry with text becomes one
`conversation.append` call (msg_id = the entry's uuid, so the server dedups any re-send).

Recording is the owner's choice: turns from while a namespace's recording is off are marked handled
and never sent, not even once recording is back on.

A hook must never break the user's session: every failure ends with at most one line on stderr
and exit status 0. See README.md beside this file for installation and the environment variables.
"""

from __future__ import annotations

import calendar
import hashlib
import json
import os
import re
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from datetime import datetime

DEFAULT_URL = "http://127.0.0.1:7777"
REQUEST_TIMEOUT = 5.0
# Stay well inside Claude Code's hook timeout; whatever is left is sent at the next Stop.
RUN_BUDGET_SECONDS = 30.0
DEFAULT_VERDICT_TTL = 600.0
# Entries that are not part of the conversation proper: injected context, subagent chains, /compact.
SKIP_FLAGS = ("isMeta", "isSidechain", "isCompactSummary")
# Slash-command plumbing and interruption markers that Claude Code writes as user text.
NOISE_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "[Request interrupted by user",
)
# Answers that may be about one turn (too long, invalid): the run goes on with the next turn.
TURN_REJECTED_STATUSES = (400, 413, 422)
# ...unless that many are refused before any is accepted: then it is the setup, not the turns.
MAX_REJECTIONS_BEFORE_ACCEPT = 3


@dataclass
class Turn:
    msg_id: str
    role: str
    content: str
    reasoning: str = ""
    timestamp: str | None = None
    end: int = 0  # byte offset just past this entry's line in the transcript


@dataclass
class Config:
    url: str
    token: str
    namespace: str | None
    agent: str
    state_dir: str
    verdict_ttl: float
    enabled: bool = True

    @classmethod
    def from_env(cls, env: dict[str, str]) -> Config:
        home = env.get("HOME") or os.path.expanduser("~")
        try:
            ttl = float(env.get("LOOM_HOOK_VERDICT_TTL_SECONDS", DEFAULT_VERDICT_TTL))
        except ValueError:
            ttl = DEFAULT_VERDICT_TTL
        capture = env.get("LOOM_CAPTURE_CONVERSATIONS", "true").strip().lower()
        return cls(
            url=(env.get("LOOM_URL") or DEFAULT_URL).rstrip("/"),
            token=env.get("LOOM_TOKEN", ""),
            namespace=env.get("LOOM_NAMESPACE") or None,
            agent=env.get("LOOM_AGENT") or "claude-code",
            state_dir=env.get("LOOM_HOOK_STATE_DIR") or os.path.join(home, ".cache", "loom", "claude-code"),
            verdict_ttl=ttl,
            enabled=capture not in ("0", "false", "no", "off"),
        )


@dataclass
class State:
    """What this hook already handled for one session.

    `sent` holds the msg_ids that are done with: answered for by the server, or never to be sent
    because recording was off. `offset` is where the next read starts (just past the last handled
    turn), so long transcripts are not re-parsed at every Stop.
    """

    path: str
    sent: set[str] = field(default_factory=set)
    offset: int = 0

    @classmethod
    def load(cls, path: str) -> State:
        try:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
            return cls(path, set(data.get("sent", [])), int(data.get("offset", 0)))
        except (OSError, ValueError, AttributeError, TypeError):
            return cls(path)  # missing or corrupt: start over, the server dedups re-sends

    def save(self) -> None:
        _write_json_atomic(self.path, {"offset": self.offset, "sent": sorted(self.sent)})


# --- transcript -> turns ----------------------------------------------------------------------------


def _parts(content: object) -> tuple[list[str], list[str]]:
    """Split message content into (text parts, thinking parts); tool calls/results and images are dropped."""
    if isinstance(content, str):
        return [content], []
    texts: list[str] = []
    thinking: list[str] = []
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif block.get("type") == "thinking" and isinstance(block.get("thinking"), str):
                thinking.append(block["thinking"])
    return texts, thinking


def _join(parts: list[str]) -> str:
    # Loom refuses NUL characters (PostgreSQL text cannot hold them): mark them instead of losing the turn.
    return "\n\n".join(p.strip() for p in parts if p.strip()).replace("\x00", "\ufffd")


def entry_to_turn(entry: object, carried_reasoning: str = "") -> Turn | None:
    """Convert one transcript entry to a Turn, or None when it carries no conversation text."""
    if not isinstance(entry, dict) or entry.get("type") not in ("user", "assistant"):
        return None
    if any(entry.get(flag) for flag in SKIP_FLAGS):
        return None
    message = entry.get("message")
    uuid = entry.get("uuid")
    if not isinstance(message, dict) or not isinstance(uuid, str) or not uuid:
        return None
    role = message.get("role") or entry["type"]
    if role not in ("user", "assistant"):
        return None
    texts, thinking = _parts(message.get("content"))
    content = _join(texts)
    if not content or content.startswith(NOISE_PREFIXES):
        return None
    reasoning = _join([carried_reasoning, *thinking]) if role == "assistant" else ""
    timestamp = entry.get("timestamp") if isinstance(entry.get("timestamp"), str) else None
    return Turn(uuid, role, content, reasoning, timestamp)


def read_new_turns(transcript_path: str, state: State) -> list[Turn]:
    """Turns after state.offset whose msg_id is not in state.sent, in file order.

    Claude Code writes one entry per content block, so an assistant message's thinking usually sits
    in its own text-less entry; it is carried to the next text entry of the same API message.
    A half-written last line ends the read (it is read next time); other unparseable lines are skipped.
    """
    turns: list[Turn] = []
    carried_id, carried = None, ""
    with open(transcript_path, "rb") as fh:
        if state.offset > os.fstat(fh.fileno()).st_size:
            state.offset = 0  # the file was replaced or truncated: rescan, `sent` still dedups
        fh.seek(state.offset)
        end = state.offset
        for raw in fh:
            end += len(raw)
            try:
                entry = json.loads(raw.decode("utf-8", "replace"))
            except ValueError:
                if raw.strip() and not raw.endswith(b"\n"):
                    break
                continue
            message = entry.get("message") if isinstance(entry, dict) else None
            message_id = message.get("id") if isinstance(message, dict) else None
            if message_id is None or message_id != carried_id:
                carried_id, carried = message_id, ""
            turn = entry_to_turn(entry, carried)
            if turn is not None:
                carried, turn.end = "", end
                if turn.msg_id not in state.sent:
                    turns.append(turn)
            elif message_id is not None and not any(entry.get(flag) for flag in SKIP_FLAGS):
                carried = _join([carried, *_parts(message.get("content"))[1]])
    return turns


# --- verdict cache ----------------------------------------------------------------------------------


def _target_key(config: Config) -> str:
    # Verdicts and delivery state belong to one Loom URL + namespace: switching either starts afresh.
    return hashlib.sha256(f"{config.url}\n{config.namespace or ''}".encode()).hexdigest()[:16]


def _verdict_path(config: Config) -> str:
    return os.path.join(config.state_dir, f"verdict-{_target_key(config)}.json")


def recording_off_until(config: Config) -> float | None:
    """When the last cached 'logging_disabled' verdict for this URL + namespace expires(d), if any.

    Until then recording counts as off; turns written before then are never sent, even after it.
    """
    try:
        with open(_verdict_path(config), encoding="utf-8") as fh:
            cached = json.load(fh)
        if cached.get("verdict") != "logging_disabled":
            return None
        return float(cached["at"]) + config.verdict_ttl
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def written_before(turn: Turn, moment: float) -> bool:
    """True when the turn's transcript timestamp is earlier than `moment` (a time.time() value).

    A turn without a readable timestamp cannot be placed in time: it counts as written now.
    """
    if not turn.timestamp:
        return False
    try:
        written = datetime.fromisoformat(turn.timestamp.strip().replace("Z", "+00:00"))
    except ValueError:
        return False
    # utctimetuple() converts an aware time to UTC and takes a naive one as UTC (what Claude Code writes).
    return calendar.timegm(written.utctimetuple()) + written.microsecond / 1e6 < moment


def cache_recording_disabled(config: Config, now: float) -> None:
    record = {"verdict": "logging_disabled", "at": now, "url": config.url, "namespace": config.namespace}
    _write_json_atomic(_verdict_path(config), record)


# --- HTTP -------------------------------------------------------------------------------------------


class AppendError(Exception):
    def __init__(self, message: str, turn_rejected: bool = False):
        super().__init__(message)
        self.turn_rejected = turn_rejected


def append_turn(config: Config, session_id: str, turn: Turn) -> dict:
    body: dict = {
        "agent": config.agent,
        "thread_id": session_id,
        "role": turn.role,
        "content": turn.content,
        "msg_id": turn.msg_id,
        "metadata": {"source": "claude-code"},
    }
    if config.namespace:
        body["namespace"] = config.namespace
    if turn.reasoning:
        body["reasoning"] = turn.reasoning
    if turn.timestamp:
        body["metadata"]["timestamp"] = turn.timestamp
    headers = {"Content-Type": "application/json"}
    if config.token:
        headers["Authorization"] = f"Bearer {config.token}"
    url = f"{config.url}/v1/conversation.append"
    request = urllib.request.Request(url, json.dumps(body).encode("utf-8"), headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT) as response:
            raw = response.read()
    except urllib.error.HTTPError as exc:
        detail = _error_detail(exc.read())
        hint = " (check LOOM_TOKEN)" if exc.code in (401, 403) else ""
        rejected = exc.code in TURN_REJECTED_STATUSES
        raise AppendError(f"HTTP {exc.code} from {url}{hint}: {detail}", rejected) from None
    except (OSError, ValueError) as exc:  # URLError, timeouts (socket.timeout on 3.9), bad LOOM_URL
        reason = getattr(exc, "reason", None) or exc
        raise AppendError(f"cannot reach {url}: {reason}") from None
    try:
        answer = json.loads(raw)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise AppendError(f"unexpected answer from {url}: {_short(raw.decode('utf-8', 'replace'))}")
    return answer


# --- main -------------------------------------------------------------------------------------------


def run(stdin_text: str, env: dict[str, str]) -> str | None:
    """Deliver new turns; returns the one-line problem to report, if any."""
    config = Config.from_env(env)
    if not config.enabled:
        return None
    try:
        hook_input = json.loads(stdin_text)
        session_id = str(hook_input["session_id"])
        transcript_path = str(hook_input["transcript_path"])
    except (ValueError, KeyError, TypeError):
        return "hook input is not a JSON object with session_id and transcript_path"
    started = time.time()
    off_until = recording_off_until(config)
    state = State.load(_state_path(config, session_id))
    try:
        turns = read_new_turns(transcript_path, state)
    except OSError as exc:
        return f"cannot read transcript {transcript_path}: {exc.strerror or exc}"
    if off_until is not None and started < off_until:
        # Recording is off for this namespace: these turns are done with, never to be sent.
        before = (len(state.sent), state.offset)
        state.sent.update(t.msg_id for t in turns)
        advance_offset(state, turns)
        if (len(state.sent), state.offset) != before:
            state.save()
        return None
    problems = deliver(config, session_id, turns, state, started, off_until)
    if not problems:
        return None
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return problems[0] + more


def deliver(
    config: Config,
    session_id: str,
    turns: list[Turn],
    state: State,
    started: float,
    off_until: float | None = None,
) -> list[str]:
    """Append turns in order, recording in `state` what is done with; returns problems.

    Turns written before `off_until` (the end of a cached "recording off" verdict) are marked
    handled without being sent.
    """
    problems: list[str] = []
    rejected: list[Turn] = []
    accepted = False
    before = (len(state.sent), state.offset)
    try:
        for index, turn in enumerate(turns):
            if time.time() - started > RUN_BUDGET_SECONDS:
                break
            if off_until is not None and written_before(turn, off_until):
                state.sent.add(turn.msg_id)  # written while recording was off: never sent
                continue
            try:
                answer = append_turn(config, session_id, turn)
            except AppendError as exc:
                problems.append(str(exc))
                if not exc.turn_rejected:
                    break
                rejected.append(turn)
                if not accepted and len(rejected) >= MAX_REJECTIONS_BEFORE_ACCEPT:
                    break
                continue
            if answer.get("stored") is False and answer.get("reason") == "logging_disabled":
                cache_recording_disabled(config, time.time())
                # Recording is off: this turn, the rest of this read, and the turns refused
                # earlier in this run are done with, never to be sent (not even once it is on).
                state.sent.update(t.msg_id for t in rejected)
                state.sent.update(t.msg_id for t in turns[index:])
                break
            # stored, duplicate, or refused for another reason: the server has decided on this turn.
            state.sent.add(turn.msg_id)
            accepted = True
        if accepted:
            # The server takes this session's turns, so those 4xx answers were about the turns
            # themselves: give up on them rather than retry at every Stop. Without an acceptance the
            # cause is more likely the setup (namespace, agent), so they stay unsent.
            state.sent.update(t.msg_id for t in rejected)
        advance_offset(state, turns)
    finally:
        if (len(state.sent), state.offset) != before:
            state.save()
    return problems


def advance_offset(state: State, turns: list[Turn]) -> None:
    """Start the next read just past the prefix of `turns` that is in state.sent."""
    for turn in turns:
        if turn.msg_id not in state.sent:
            break
        state.offset = turn.end


def main(stdin_text: str, env: dict[str, str]) -> int:
    try:
        problem = run(stdin_text, env)
    except Exception as exc:  # a hook must never break the user's session
        problem = f"unexpected error: {type(exc).__name__}: {exc}"
    if problem:
        print(f"loom hook: {_short(problem, 300)}", file=sys.stderr)
    return 0


# --- helpers ----------------------------------------------------------------------------------------


def _state_path(config: Config, session_id: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,100}", session_id):  # keep odd ids out of the file name
        session_id = hashlib.sha256(session_id.encode()).hexdigest()[:32]
    return os.path.join(config.state_dir, f"session-{_target_key(config)}-{session_id}.json")


def _write_json_atomic(path: str, data: object) -> None:
    # Write-then-rename so a hook killed mid-write never leaves a truncated file behind.
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _error_detail(raw: bytes) -> str:
    # Loom answers errors as {"error": reason, "field": ...}; show the reason, or the raw body.
    try:
        answer = json.loads(raw)
        detail = f"{answer['error']}" + (f" ({answer['field']})" if answer.get("field") else "")
    except (ValueError, KeyError, TypeError, AttributeError):
        detail = raw.decode("utf-8", "replace")
    return _short(detail)


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


if __name__ == "__main__":
    try:
        stdin = sys.stdin.read()
    except Exception:  # unreadable stdin is reported by main as bad input
        stdin = ""
    sys.exit(main(stdin, dict(os.environ)))
