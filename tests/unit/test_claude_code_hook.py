"""The Claude Code Stop hook, run against a tiny in-process HTTP server that answers like
conversation.ingest.

A fake server is fine here: the hook is a stdlib client script with no access to the app; the
real API round trip belongs to the integration tests.
"""

import importlib.util
import json
import os
import socket
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

HOOK_PATH = Path(__file__).resolve().parents[2] / "integrations" / "claude-code" / "loom_stop_hook.py"
_spec = importlib.util.spec_from_file_location("loom_stop_hook", HOOK_PATH)
hook = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = hook  # dataclasses look their module up while the file executes
_write_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # no __pycache__ beside the hook
_spec.loader.exec_module(hook)
sys.dont_write_bytecode = _write_bytecode

SESSION = "0b5e2a9c-1111-4222-8333-444455556666"


def user(uuid, content, **extra):
    return {
        "type": "user",
        "uuid": uuid,
        "sessionId": SESSION,
        "timestamp": f"2025-01-01T00:00:0{uuid[-1]}Z",
        "message": {"role": "user", "content": content},
        **extra,
    }


def assistant(uuid, blocks, message_id=None, **extra):
    message = {"role": "assistant", "content": blocks, "id": message_id or f"msg_{uuid}"}
    return {
        "type": "assistant",
        "uuid": uuid,
        "sessionId": SESSION,
        "timestamp": "2025-01-01T00:00:09Z",
        "message": message,
        **extra,
    }


def text(value):
    return {"type": "text", "text": value}


def thinking(value):
    return {"type": "thinking", "thinking": value, "signature": "sig"}


def iso(seconds):
    """A time.time() value as Claude Code writes transcript timestamps (UTC, milliseconds)."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


TOOL_USE = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
TOOL_RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}


# --- a fake Loom ------------------------------------------------------------------------------------


class FakeLoom:
    """Records ingest requests; answers like conversation.ingest (the same text again: duplicate)."""

    def __init__(self):
        self.requests = []
        self.mode = "record"  # or "disabled", or an int HTTP status to fail with
        self.seen = set()
        self.too_large = "TOO-LARGE"  # a transcript holding this is answered 413
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(
                    {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
                )
                if isinstance(fake.mode, int):
                    return self._answer(fake.mode, {"error": "nope"})
                if fake.too_large in body["transcript"]:
                    return self._answer(413, {"error": "request body over 32 MiB"})
                if fake.mode == "disabled":
                    return self._answer(200, {"stored": False, "reason": "logging_disabled"})
                duplicate = body["transcript"] in fake.seen
                fake.seen.add(body["transcript"])
                run = {"id": len(fake.requests), "status": "pending"}
                self._answer(
                    200, {"stored": not duplicate, "reason": "duplicate" if duplicate else None, "run": run}
                )

            def _answer(self, status, payload):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    def bodies(self):
        return [r["body"] for r in self.requests]

    def uuids(self):
        """The uuids of the entries each request carried, a list per request."""
        return [[json.loads(line)["uuid"] for line in b["transcript"].splitlines()] for b in self.bodies()]


@pytest.fixture(autouse=True)
def no_proxy_for_localhost(monkeypatch):
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


@pytest.fixture
def loom():
    fake = FakeLoom()
    fake.thread.start()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


@pytest.fixture
def transcript(tmp_path):
    path = tmp_path / f"{SESSION}.jsonl"
    path.write_text("")
    return path


def append_lines(path, *entries):
    with open(path, "a", encoding="utf-8") as fh:
        for entry in entries:
            fh.write(json.dumps(entry) + "\n")


def env_for(loom_url, tmp_path, **extra):
    env = {
        "LOOM_URL": loom_url,
        "LOOM_TOKEN": "tok",
        "LOOM_NAMESPACE": "team",
        "LOOM_HOOK_STATE_DIR": str(tmp_path / "state"),
        "HOME": str(tmp_path),
    }
    env.update(extra)
    return env


def unreachable_url():
    with socket.socket() as sock:  # a port that was just free: nothing listens there
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def state_of(env):
    path = Path(hook._state_path(hook.Config.from_env(env), SESSION))
    return json.loads(path.read_text())


def spool_of(env):
    return [Path(p).name for p in hook.spooled(hook.Config.from_env(env))]


def run_hook(transcript_path, env):
    stdin = json.dumps(
        {
            "session_id": SESSION,
            "transcript_path": str(transcript_path),
            "hook_event_name": "Stop",
            "stop_hook_active": False,
        }
    )
    return hook.main(stdin, env)


# --- which lines are sent ---------------------------------------------------------------------------


def test_a_stop_sends_the_new_conversation_lines_as_they_were_written_in_one_request(
    loom, transcript, tmp_path
):
    entries = [
        user("u1", "What is 2+2?"),
        {"type": "summary", "summary": "Title", "leafUuid": "x"},
        assistant("a2", [thinking("easy"), text("4")]),
        assistant("a3", [TOOL_USE]),
        user("u4", [TOOL_RESULT]),
        user("u5", "injected context", isMeta=True),
        assistant("a6", [text("subagent")], isSidechain=True),
        user("u7", [text("Thanks")]),
    ]
    append_lines(transcript, *entries)
    assert run_hook(transcript, env_for(loom.url, tmp_path)) == 0
    (request,) = loom.requests
    assert (request["path"], request["auth"]) == ("/v1/conversation.ingest", "Bearer tok")
    kept = [entries[0], entries[2], entries[7]]  # tool calls and results are never sent
    assert request["body"] == {
        "namespace": "team",
        "agent": "claude-code",
        "thread_id": SESSION,
        "source": f"claude-code {SESSION}",
        "transcript": "".join(json.dumps(e) + "\n" for e in kept),
    }


def test_namespace_is_omitted_when_unset_and_agent_can_be_overridden(loom, transcript, tmp_path):
    append_lines(transcript, user("u1", "hi"))
    env = env_for(loom.url, tmp_path, LOOM_AGENT="my-claude")
    del env["LOOM_NAMESPACE"]
    run_hook(transcript, env)
    body = loom.bodies()[0]
    assert "namespace" not in body and body["agent"] == "my-claude"


def test_each_stop_sends_only_the_lines_after_the_last_handed_over(loom, transcript, tmp_path):
    env = env_for(loom.url, tmp_path)
    append_lines(transcript, user("u1", "one"), assistant("a2", [text("two")]))
    run_hook(transcript, env)
    append_lines(transcript, user("u3", "three"), assistant("a4", [text("four")]))
    run_hook(transcript, env)
    run_hook(transcript, env)  # nothing new: no request at all
    assert loom.uuids() == [["u1", "a2"], ["u3", "a4"]]
    assert state_of(env) == {"offset": transcript.stat().st_size}
    assert spool_of(env) == []


def test_thinking_written_apart_waits_for_the_text_of_its_message(loom, transcript, tmp_path):
    env = env_for(loom.url, tmp_path)
    append_lines(transcript, user("u1", "question"), assistant("a2", [thinking("step one")], message_id="m"))
    run_hook(transcript, env)
    append_lines(transcript, assistant("a3", [text("reply")], message_id="m"))
    run_hook(transcript, env)
    assert loom.uuids() == [["u1"], ["a2", "a3"]]  # Loom sees the thinking with its text


def test_a_half_written_last_line_is_left_for_the_next_stop(loom, transcript, tmp_path):
    env = env_for(loom.url, tmp_path)
    append_lines(transcript, user("u1", "hi"))
    half = json.dumps(user("u2", "there"))
    with open(transcript, "a") as fh:
        fh.write(half[:20])
    run_hook(transcript, env)
    with open(transcript, "a") as fh:
        fh.write(half[20:] + "\nnot json\n")
    run_hook(transcript, env)
    assert loom.uuids() == [["u1"], ["u2"]]


def test_lost_state_only_causes_a_harmless_duplicate(loom, transcript, tmp_path):
    env = env_for(loom.url, tmp_path)
    append_lines(transcript, user("u1", "one"))
    run_hook(transcript, env)
    Path(hook._state_path(hook.Config.from_env(env), SESSION)).write_text("{corrupt")
    assert run_hook(transcript, env) == 0
    assert loom.uuids() == [["u1"], ["u1"]]  # the server answers "duplicate"


def test_a_long_backlog_goes_in_requests_under_the_size_limit_in_order(loom, transcript, tmp_path):
    env = env_for(loom.url, tmp_path, LOOM_HOOK_MAX_REQUEST_BYTES="1000")
    entries = [user(f"u{i}", f"turn {i} " + "x" * 200) for i in range(10)]
    append_lines(transcript, *entries)
    run_hook(transcript, env)
    assert [u for request in loom.uuids() for u in request] == [f"u{i}" for i in range(10)]
    assert len(loom.requests) > 2
    assert all(len(b["transcript"].encode()) <= 1000 for b in loom.bodies())


# --- the spool --------------------------------------------------------------------------------------


def test_while_loom_cannot_be_reached_requests_are_spooled_and_later_sent_in_order_once(
    loom, transcript, tmp_path, capsys
):
    down = env_for(unreachable_url(), tmp_path)
    up = {**down, "LOOM_URL": loom.url}
    down_spool = Path(hook.Config.from_env(down).spool_dir)
    up_spool = Path(hook.Config.from_env(up).spool_dir)
    append_lines(transcript, user("u1", "one"))
    assert run_hook(transcript, down) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("loom hook: cannot reach ")
    append_lines(transcript, user("u2", "two"))
    run_hook(transcript, down)
    assert len(spool_of(down)) == 2 and state_of(down) == {"offset": transcript.stat().st_size}

    # The same Loom back at its address (here: the spool moved to the URL that answers).
    up_spool.parent.mkdir(parents=True, exist_ok=True)
    down_spool.rename(up_spool)
    Path(hook._state_path(hook.Config.from_env(down), SESSION)).rename(
        hook._state_path(hook.Config.from_env(up), SESSION)
    )
    append_lines(transcript, user("u3", "three"))
    assert run_hook(transcript, up) == 0
    assert loom.uuids() == [["u1"], ["u2"], ["u3"]]
    assert spool_of(up) == []
    run_hook(transcript, up)
    assert len(loom.requests) == 3


def test_a_server_error_keeps_the_spool_for_the_next_stop(loom, transcript, tmp_path, capsys):
    env = env_for(loom.url, tmp_path)
    append_lines(transcript, user("u1", "one"), user("u2", "two"))
    loom.mode = 503
    assert run_hook(transcript, env) == 0
    assert capsys.readouterr().err.startswith("loom hook: HTTP 503")
    assert len(spool_of(env)) == 1
    loom.mode = "record"
    run_hook(transcript, env)
    assert loom.uuids() == [["u1", "u2"], ["u1", "u2"]] and spool_of(env) == []


def test_a_request_the_server_refuses_as_too_large_is_set_aside_and_the_rest_goes_on(
    loom, transcript, tmp_path, capsys
):
    env = env_for(loom.url, tmp_path, LOOM_HOOK_MAX_REQUEST_BYTES="10")  # one entry a request
    append_lines(transcript, user("u1", "one"), user("u2", "TOO-LARGE"), user("u3", "three"))
    assert run_hook(transcript, env) == 0
    assert loom.uuids() == [["u1"], ["u2"], ["u3"]]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("loom hook: HTTP 413") and "set aside in" in err
    (aside,) = (tmp_path / "state" / "rejected").iterdir()
    assert "TOO-LARGE" in json.loads(aside.read_text())["transcript"]
    assert spool_of(env) == []


def test_a_refusal_that_points_at_the_setup_keeps_the_spool(loom, transcript, tmp_path, capsys):
    env = env_for(loom.url, tmp_path)
    append_lines(transcript, user("u1", "one"))
    loom.mode = 422
    run_hook(transcript, env)
    assert "HTTP 422" in capsys.readouterr().err and len(spool_of(env)) == 1
    loom.mode = "record"
    run_hook(transcript, env)
    assert loom.uuids() == [["u1"], ["u1"]] and spool_of(env) == []


def test_an_unauthorized_answer_hints_at_the_token(loom, transcript, tmp_path, capsys):
    append_lines(transcript, user("u1", "one"))
    loom.mode = 401
    run_hook(transcript, env_for(loom.url, tmp_path))
    assert "(check LOOM_TOKEN)" in capsys.readouterr().err


# --- the recording switch ---------------------------------------------------------------------------


def test_lines_from_while_recording_is_off_are_never_sent_even_after_it_is_back_on(
    loom, transcript, tmp_path
):
    env = env_for(loom.url, tmp_path, LOOM_HOOK_VERDICT_TTL_SECONDS="600")
    append_lines(transcript, user("u1", "one"), assistant("a2", [text("two")]))
    loom.mode = "disabled"
    assert run_hook(transcript, env) == 0
    assert loom.uuids() == [["u1", "a2"]] and spool_of(env) == []  # refused: done with, for good

    append_lines(transcript, user("u3", "three"))
    assert run_hook(transcript, env) == 0
    assert len(loom.requests) == 1  # verdict cached: no call at all...
    assert state_of(env) == {"offset": transcript.stat().st_size}  # ...but read
    assert spool_of(env) == []

    # Another namespace has its own verdict (and its own record of what was handed over).
    loom.mode = "record"
    assert run_hook(transcript, {**env, "LOOM_NAMESPACE": "other"}) == 0
    assert [b["namespace"] for b in loom.bodies()] == ["team", "other"]
    loom.requests.clear()

    (verdict_file,) = (tmp_path / "state").glob("verdict-*.json")
    verdict = json.loads(verdict_file.read_text())
    assert verdict["verdict"] == "logging_disabled" and verdict["namespace"] == "team"
    verdict["at"] -= 601
    verdict_file.write_text(json.dumps(verdict))
    expired_at = verdict["at"] + 600
    # u4 was written before the verdict expired, after the last Stop: it is from the off period too.
    append_lines(
        transcript,
        user("u4", "four", timestamp=iso(expired_at - 5)),
        assistant("a5", [text("five")], timestamp=iso(time.time())),
        user("u6", "six", timestamp=iso(time.time())),
    )
    assert run_hook(transcript, env) == 0
    assert loom.uuids() == [["a5", "u6"]]  # only lines from after the expiry
    assert run_hook(transcript, env) == 0
    assert len(loom.requests) == 1


def test_capture_can_be_turned_off_entirely(loom, transcript, tmp_path):
    append_lines(transcript, user("u1", "one"))
    assert run_hook(transcript, env_for(loom.url, tmp_path, LOOM_CAPTURE_CONVERSATIONS="false")) == 0
    assert loom.requests == []
    assert not (tmp_path / "state").exists()


# --- never breaks the session -----------------------------------------------------------------------


@pytest.mark.parametrize("stdin", ["", "not json", "[]", '{"session_id": "x"}'])
def test_bad_hook_input_is_reported_not_raised(stdin, tmp_path, capsys):
    assert hook.main(stdin, env_for(unreachable_url(), tmp_path)) == 0
    assert capsys.readouterr().err.startswith("loom hook: hook input is not a JSON object")


def test_a_missing_transcript_is_reported_not_raised(tmp_path, capsys):
    assert run_hook(tmp_path / "gone.jsonl", env_for(unreachable_url(), tmp_path)) == 0
    assert capsys.readouterr().err.startswith("loom hook: cannot read transcript")


def test_the_script_runs_standalone_and_exits_zero_even_when_loom_is_down(transcript, tmp_path):
    assert os.access(HOOK_PATH, os.X_OK)
    append_lines(transcript, user("u1", "one"))
    stdin = json.dumps({"session_id": SESSION, "transcript_path": str(transcript)})
    result = subprocess.run(
        [sys.executable, str(HOOK_PATH)],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **env_for(unreachable_url(), tmp_path)},
        timeout=30,
    )
    assert result.returncode == 0
    assert result.stdout == ""
    assert result.stderr.startswith("loom hook: cannot reach")
