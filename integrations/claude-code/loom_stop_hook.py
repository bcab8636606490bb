#!/usr/bin/env python3
"""Claude Code Stop hook: hand the session's new transcript lines to Loom (conversation.ingest).

Stdlib only, Python 3.9+. Claude Code passes {"session_id", "transcript_path", ...} on stdin; the
transcript is JSON lines, one entry per line. Each Stop reads the complete lines after the last one
handed over, keeps the user and assistant entries that carry text or thinking (tool calls and
results are never sent), and sends them as one `conversation.ingest` request; Loom's worker turns
entries into turns (msg_id = the entry's uuid, so any re-send is a no-op).

Every request goes through a spool directory first and leaves it once Loom has answered it, so a
request made while Loom cannot be reached is sent on a later run, in order, and exactly once (a
copy that was sent but not yet removed when the hook was killed is answered "duplicate").

Recording is the owner's choice: lines from while a namespace's recording is off are never sent,
not even once recording is back on.

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
from dataclasses import dataclass
from datetime import datetime

try:
    import fcntl
except ImportError:  # Windows: no lock; at worst two runs send the same request, answered "duplicate"
    fcntl = None

DEFAULT_URL = "http://127.0.0.1:7777"
REQUEST_TIMEOUT = 10.0
# Stay well inside Claude Code's hook timeout; whatever is left is sent at the next Stop.
RUN_BUDGET_SECONDS = 30.0
DEFAULT_VERDICT_TTL = 600.0
# Well under Loom's LOOM_INGEST_MAX_BYTES (32 MiB): a long backlog goes in several requests.
DEFAULT_MAX_REQUEST_BYTES = 4 * 1024 * 1024
# Entries that are not the conversation proper (Loom skips them too): not worth sending.
SKIP_FLAGS = ("isMeta", "isSidechain", "isCompactSummary")
# Answers that say the request itself will never be taken: it is set aside, and the spool goes on.
REQUEST_REFUSED = (413,)


@dataclass
class Config:
    url: str
    token: str
    namespace: str | None
    agent: str
    state_dir: str
    verdict_ttl: float
    max_request_bytes: int
    enabled: bool = True

    @classmethod
    def from_env(cls, env: dict[str, str]) -> Config:
        home = env.get("HOME") or os.path.expanduser("~")
        capture = env.get("LOOM_CAPTURE_CONVERSATIONS", "true").strip().lower()
        return cls(
            url=(env.get("LOOM_URL") or DEFAULT_URL).rstrip("/"),
            token=env.get("LOOM_TOKEN", ""),
            namespace=env.get("LOOM_NAMESPACE") or None,
            agent=env.get("LOOM_AGENT") or "claude-code",
            state_dir=env.get("LOOM_HOOK_STATE_DIR") or os.path.join(home, ".cache", "loom", "claude-code"),
            verdict_ttl=_number(env.get("LOOM_HOOK_VERDICT_TTL_SECONDS"), DEFAULT_VERDICT_TTL),
            max_request_bytes=int(_number(env.get("LOOM_HOOK_MAX_REQUEST_BYTES"), DEFAULT_MAX_REQUEST_BYTES)),
            enabled=capture not in ("0", "false", "no", "off"),
        )

    @property
    def target(self) -> str:
        # Verdicts, offsets and the spool belong to one Loom URL + namespace: switching either starts afresh.
        return hashlib.sha256(f"{self.url}\n{self.namespace or ''}".encode()).hexdigest()[:16]

    @property
    def spool_dir(self) -> str:
        return os.path.join(self.state_dir, f"spool-{self.target}")


@dataclass
class Line:
    raw: str  # the entry's line as Claude Code wrote it, without its newline
    timestamp: str | None


# --- reading the transcript -------------------------------------------------------------------------


def read_new_lines(transcript_path: str, offset: int) -> tuple[list[Line], int]:
    """The lines worth sending after byte `offset`, and the offset the next read starts from.

    A half-written last line ends the read (it is read next time); unparseable lines are skipped.
    Thinking that Claude Code wrote in its own entry waits for the text of its message: trailing
    text-less assistant entries are left for the next read, so Loom sees them together.
    """
    kept: list[tuple[Line, int, bool]] = []  # (line, its start offset, is it text-less thinking)
    with open(transcript_path, "rb") as fh:
        if offset > os.fstat(fh.fileno()).st_size:
            offset = 0  # the file was replaced or truncated: read it again, Loom dedups on uuid
        fh.seek(offset)
        end = offset
        for raw in fh:
            if not raw.endswith(b"\n"):
                break
            start, end = end, end + len(raw)
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            worth, waiting = _worth_sending(entry)
            if worth:
                stamp = entry.get("timestamp")
                kept.append((Line(line, stamp if isinstance(stamp, str) else None), start, waiting))
    while kept and kept[-1][2]:
        end = kept.pop()[1]
    return [line for line, _, _ in kept], end


def _worth_sending(entry: object) -> tuple[bool, bool]:
    """(is it a user or assistant entry with text or thinking, is it thinking still waiting for text)."""
    if not isinstance(entry, dict) or entry.get("type") not in ("user", "assistant"):
        return False, False
    message = entry.get("message")
    if any(entry.get(flag) for flag in SKIP_FLAGS) or not isinstance(message, dict):
        return False, False
    content = message.get("content")
    if isinstance(content, str):
        return bool(content.strip()), False
    kinds = {b.get("type") for b in content if isinstance(b, dict)} if isinstance(content, list) else set()
    return bool(kinds & {"text", "thinking"}), entry["type"] == "assistant" and "text" not in kinds


def requests_for(lines: list[Line], limit: int) -> list[str]:
    """The lines as transcripts of at most `limit` bytes each (a longer line goes alone)."""
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for line in lines:
        length = len(line.raw.encode("utf-8")) + 1
        if current and size + length > limit:
            chunks.append("\n".join(current) + "\n")
            current, size = [], 0
        current.append(line.raw)
        size += length
    if current:
        chunks.append("\n".join(current) + "\n")
    return chunks


# --- the recording verdict --------------------------------------------------------------------------


def _verdict_path(config: Config) -> str:
    return os.path.join(config.state_dir, f"verdict-{config.target}.json")


def recording_off_until(config: Config) -> float | None:
    """When the last cached 'logging_disabled' verdict for this URL + namespace expires(d), if any.

    Until then recording counts as off; lines written before then are never sent, even after it.
    """
    try:
        with open(_verdict_path(config), encoding="utf-8") as fh:
            cached = json.load(fh)
        if cached.get("verdict") != "logging_disabled":
            return None
        return float(cached["at"]) + config.verdict_ttl
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def cache_recording_disabled(config: Config, now: float) -> None:
    record = {"verdict": "logging_disabled", "at": now, "url": config.url, "namespace": config.namespace}
    _write_json_atomic(_verdict_path(config), record)


def written_before(line: Line, moment: float) -> bool:
    """True when the entry's transcript timestamp is earlier than `moment` (a time.time() value).

    An entry without a readable timestamp cannot be placed in time: it counts as written now.
    """
    if not line.timestamp:
        return False
    try:
        written = datetime.fromisoformat(line.timestamp.strip().replace("Z", "+00:00"))
    except ValueError:
        return False
    # utctimetuple() converts an aware time to UTC and takes a naive one as UTC (what Claude Code writes).
    return calendar.timegm(written.utctimetuple()) + written.microsecond / 1e6 < moment


# --- the spool --------------------------------------------------------------------------------------


def spool(config: Config, session_id: str, transcripts: list[str]) -> None:
    """Write one request file per transcript, named so that a sort gives the order they were made in."""
    thread_id = session_id if len(session_id) <= 256 else hashlib.sha256(session_id.encode()).hexdigest()
    body: dict = {"agent": config.agent, "thread_id": thread_id, "source": f"claude-code {thread_id}"[:256]}
    if config.namespace:
        body["namespace"] = config.namespace
    for transcript in transcripts:
        name = f"{time.time_ns():020d}-{os.getpid()}-{_safe(session_id)}.json"
        _write_json_atomic(os.path.join(config.spool_dir, name), {**body, "transcript": transcript})


def spooled(config: Config) -> list[str]:
    try:
        names = sorted(n for n in os.listdir(config.spool_dir) if n.endswith(".json"))
    except FileNotFoundError:
        return []
    return [os.path.join(config.spool_dir, n) for n in names]


def flush(config: Config, started: float) -> list[str]:
    """Send the spooled requests in order, each removed once Loom has answered it; returns problems."""
    os.makedirs(config.spool_dir, exist_ok=True)
    with open(os.path.join(config.spool_dir, ".lock"), "w") as lock:
        if fcntl is not None:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return []  # another run is sending this spool, in order
        problems: list[str] = []
        pending = spooled(config)
        for index, path in enumerate(pending):
            if time.time() - started > RUN_BUDGET_SECONDS:
                break
            try:
                with open(path, encoding="utf-8") as fh:
                    body = json.load(fh)
                answer = send(config, body)
            except ValueError:  # not JSON (edited by hand?): set aside, never blocking the rest
                problems.append(f"a spooled request is not JSON (set aside in {_set_aside(config, path)})")
                continue
            except SendError as exc:
                problems.append(str(exc))
                if exc.status in REQUEST_REFUSED:
                    problems[-1] += f" (request set aside in {_set_aside(config, path)})"
                    continue
                break
            if answer.get("reason") == "logging_disabled":
                cache_recording_disabled(config, time.time())
                for later in pending[index:]:  # recording is off: these are never sent
                    _remove(later)
                break
            _remove(path)  # stored, or handed over before: Loom has it
        return problems


def _set_aside(config: Config, path: str) -> str:
    aside = os.path.join(config.state_dir, "rejected")
    os.makedirs(aside, exist_ok=True)
    target = os.path.join(aside, os.path.basename(path))
    os.replace(path, target)
    return target


# --- HTTP -------------------------------------------------------------------------------------------


class SendError(Exception):
    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


def send(config: Config, body: dict) -> dict:
    headers = {"Content-Type": "application/json"}
    if config.token:
        headers["Authorization"] = f"Bearer {config.token}"
    url = f"{config.url}/v1/conversation.ingest"
    request = urllib.request.Request(url, json.dumps(body).encode("utf-8"), headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT) as response:
            raw = response.read()
    except urllib.error.HTTPError as exc:
        detail = _error_detail(exc.read())
        hint = " (check LOOM_TOKEN)" if exc.code in (401, 403) else ""
        raise SendError(f"HTTP {exc.code} from {url}{hint}: {detail}", exc.code) from None
    except (OSError, ValueError) as exc:  # URLError, timeouts (socket.timeout on 3.9), bad LOOM_URL
        reason = getattr(exc, "reason", None) or exc
        raise SendError(f"cannot reach {url}: {reason}") from None
    try:
        answer = json.loads(raw)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise SendError(f"unexpected answer from {url}: {_short(raw.decode('utf-8', 'replace'))}")
    return answer


# --- main -------------------------------------------------------------------------------------------


def run(stdin_text: str, env: dict[str, str]) -> str | None:
    """Hand the new lines over; returns the one-line problem to report, if any."""
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
    state_path = _state_path(config, session_id)
    offset = _load_offset(state_path)
    try:
        lines, end = read_new_lines(transcript_path, offset)
    except OSError as exc:
        return f"cannot read transcript {transcript_path}: {exc.strerror or exc}"
    off_until = recording_off_until(config)
    if off_until is not None:
        if started < off_until:
            lines = []  # recording is off for this namespace: these lines are done with, never sent
        lines = [line for line in lines if not written_before(line, off_until)]
    if lines:
        spool(config, session_id, requests_for(lines, config.max_request_bytes))
    if end != offset:
        _write_json_atomic(state_path, {"offset": end})
    if off_until is not None and started < off_until:
        return None  # no call to Loom while the verdict holds
    problems = flush(config, started)
    if not problems:
        return None
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return problems[0] + more


def main(stdin_text: str, env: dict[str, str]) -> int:
    try:
        problem = run(stdin_text, env)
    except Exception as exc:  # a hook must never break the user's session
        problem = f"unexpected error: {type(exc).__name__}: {exc}"
    if problem:
        print(f"loom hook: {_short(problem, 300)}", file=sys.stderr)
    return 0


# --- helpers ----------------------------------------------------------------------------------------


def _safe(session_id: str) -> str:
    if re.fullmatch(r"[A-Za-z0-9_-]{1,100}", session_id):
        return session_id
    return hashlib.sha256(session_id.encode()).hexdigest()[:32]  # keep odd ids out of file names


def _state_path(config: Config, session_id: str) -> str:
    return os.path.join(config.state_dir, f"session-{config.target}-{_safe(session_id)}.json")


def _load_offset(path: str) -> int:
    try:
        with open(path, encoding="utf-8") as fh:
            return max(0, int(json.load(fh)["offset"]))
    except (OSError, ValueError, KeyError, TypeError):
        return 0  # missing or corrupt: read from the start, Loom dedups on uuid


def _number(value: str | None, default: float) -> float:
    try:
        return float(value) if value else default
    except ValueError:
        return default


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _write_json_atomic(path: str, data: object) -> None:
    # Write-then-rename so a hook killed mid-write never leaves a truncated file behind.
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".part")
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
