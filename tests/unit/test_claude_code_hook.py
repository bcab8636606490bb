"""The Claude Code Stop hook, run against a tiny in-process HTTP server that answers like append.

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
    """Records append requests; answers like conversation.append (dedup on msg_id)."""

    def __init__(self):
        self.requests = []
        self.mode = "record"  # or "disabled", or an int HTTP status to fail with
        self.seen = set()
        self.reject = set()  # msg_ids answered with 422
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(
                    {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
                )
                if isinstance(fake.mode, int):
                    return self._answer(fake.mode, {"error": "nope"})
                if body["msg_id"] in fake.reject:
                    return self._answer(422, {"error": "content too long", "field": "content"})
                if fake.mode == "disabled":
                    return self._answer(200, {"stored": False, "reason": "logging_disabled"})
                duplicate = body["msg_id"] in fake.seen
                fake.seen.add(body["msg_id"])
                reason = "duplicate" if duplicate else None
                self._answer(200, {"stored": not duplicate, "reason": reason, "turn_id": 1})

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


def state_file(tmp_path):
    (path,) = (tmp_path / "state").glob(f"session-*-{SESSION}.json")
    return path


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


# --- transcript entry -> turn -----------------------------------------------------------------------


def test_a_user_entry_with_string_content_becomes_a_user_turn():
    turn = hook.entry_to_turn(user("u1", "hello there"))
    assert (turn.msg_id, turn.role, turn.content, turn.reasoning) == ("u1", "user", "hello there", "")
    assert turn.timestamp == "2025-01-01T00:00:01Z"


def test_text_parts_are_joined_and_tool_calls_left_out():
    turn = hook.entry_to_turn(assistant("a1", [text("First."), TOOL_USE, text("  Second.\n")]))
    assert turn.content == "First.\n\nSecond."


def test_nul_characters_are_replaced_because_loom_refuses_them():
    turn = hook.entry_to_turn(assistant("a1", [thinking("x\x00y"), text("a\x00b")]))
    assert (turn.content, turn.reasoning) == ("a\ufffdb", "x\ufffdy")


def test_thinking_parts_become_reasoning_not_content():
    turn = hook.entry_to_turn(assistant("a1", [thinking("ponder"), text("answer")]))
    assert (turn.content, turn.reasoning) == ("answer", "ponder")


@pytest.mark.parametrize(
    "entry",
    [
        assistant("a1", [TOOL_USE]),
        assistant("a1", [thinking("only thinking")]),
        user("u1", [TOOL_RESULT]),
        user("u1", "   "),
        user("u1", "injected context", isMeta=True),
        assistant("a1", [text("subagent")], isSidechain=True),
        user("u1", "This session is being continued...", isCompactSummary=True),
        user("u1", "<command-name>/clear</command-name>\n<command-message>clear</command-message>"),
        user("u1", [text("[Request interrupted by user]")]),
        {"type": "summary", "summary": "Title", "leafUuid": "x"},
        {"type": "user", "message": {"role": "user", "content": "no uuid"}},
        "not an object",
    ],
    ids=[
        "tool-use",
        "thinking-only",
        "tool-result",
        "blank",
        "meta",
        "sidechain",
        "compact-summary",
        "slash-command",
        "interrupted",
        "summary",
        "no-uuid",
        "not-object",
    ],
)
def test_entries_without_conversation_text_are_skipped(entry):
    assert hook.entry_to_turn(entry) is None


def test_thinking_in_its_own_entry_is_carried_to_the_text_of_the_same_message(transcript):
    append_lines(
        transcript,
        user("u1", "question"),
        assistant("a1", [thinking("step one")], message_id="msg_A"),
        assistant("a2", [text("reply")], message_id="msg_A"),
        assistant("a3", [thinking("unrelated")], message_id="msg_B"),
        assistant("a4", [TOOL_USE], message_id="msg_B"),
        user("u5", [TOOL_RESULT]),
        assistant("a6", [text("done")], message_id="msg_C"),
    )
    turns = hook.read_new_turns(str(transcript), hook.State("unused"))
    assert [(t.msg_id, t.content, t.reasoning) for t in turns] == [
        ("u1", "question", ""),
        ("a2", "reply", "step one"),
        ("a6", "done", ""),
    ]


def test_a_half_written_last_line_is_left_for_the_next_read(transcript):
    append_lines(transcript, user("u1", "hi"))
    with open(transcript, "a") as fh:
        fh.write('{"type": "assistant", "uuid": "a2", "mess')
    assert [t.msg_id for t in hook.read_new_turns(str(transcript), hook.State("unused"))] == ["u1"]


def test_turns_already_sent_are_not_read_again(transcript):
    append_lines(transcript, user("u1", "hi"), assistant("a2", [text("hello")]))
    state = hook.State("unused", sent={"u1"})
    assert [t.msg_id for t in hook.read_new_turns(str(transcript), state)] == ["a2"]


# --- main against a fake server ---------------------------------------------------------------------


def test_main_appends_each_turn_with_the_documented_body(loom, transcript, tmp_path):
    append_lines(
        transcript,
        user("u1", "What is 2+2?"),
        assistant("a2", [thinking("easy"), text("4")]),
        assistant("a3", [TOOL_USE]),
    )
    assert run_hook(transcript, env_for(loom.url, tmp_path)) == 0
    assert [r["path"] for r in loom.requests] == ["/v1/conversation.append"] * 2
    assert {r["auth"] for r in loom.requests} == {"Bearer tok"}
    assert loom.bodies() == [
        {
            "namespace": "team",
            "agent": "claude-code",
            "thread_id": SESSION,
            "role": "user",
            "content": "What is 2+2?",
            "msg_id": "u1",
            "metadata": {"source": "claude-code", "timestamp": "2025-01-01T00:00:01Z"},
        },
        {
            "namespace": "team",
            "agent": "claude-code",
            "thread_id": SESSION,
            "role": "assistant",
            "content": "4",
            "msg_id": "a2",
            "reasoning": "easy",
            "metadata": {"source": "claude-code", "timestamp": "2025-01-01T00:00:09Z"},
        },
    ]


def test_namespace_is_omitted_when_unset_and_agent_can_be_overridden(loom, transcript, tmp_path):
    append_lines(transcript, user("u1", "hi"))
    env = env_for(loom.url, tmp_path, LOOM_AGENT="my-claude")
    del env["LOOM_NAMESPACE"]
    run_hook(transcript, env)
    body = loom.bodies()[0]
    assert "namespace" not in body and body["agent"] == "my-claude"


def test_a_second_run_sends_only_the_new_turns(loom, transcript, tmp_path):
    env = env_for(loom.url, tmp_path)
    append_lines(transcript, user("u1", "one"), assistant("a2", [text("two")]))
    run_hook(transcript, env)
    append_lines(transcript, user("u3", "three"), assistant("a4", [text("four")]))
    run_hook(transcript, env)
    run_hook(transcript, env)
    assert [b["msg_id"] for b in loom.bodies()] == ["u1", "a2", "u3", "a4"]
    state = json.loads(state_file(tmp_path).read_text())
    assert state["sent"] == ["a2", "a4", "u1", "u3"]
    assert state["offset"] == transcript.stat().st_size


def test_lost_state_only_causes_harmless_duplicates(loom, transcript, tmp_path):
    env = env_for(loom.url, tmp_path)
    append_lines(transcript, user("u1", "one"))
    run_hook(transcript, env)
    state_file(tmp_path).write_text("{corrupt")
    assert run_hook(transcript, env) == 0
    assert [b["msg_id"] for b in loom.bodies()] == ["u1", "u1"]  # the server answers "duplicate"


def test_turns_from_while_recording_is_off_are_never_sent_even_after_it_is_back_on(
    loom, transcript, tmp_path
):
    env = env_for(loom.url, tmp_path, LOOM_HOOK_VERDICT_TTL_SECONDS="600")
    team_state = Path(hook._state_path(hook.Config.from_env(env), SESSION))
    append_lines(transcript, user("u1", "one"), assistant("a2", [text("two")]))
    loom.mode = "disabled"
    assert run_hook(transcript, env) == 0
    assert [b["msg_id"] for b in loom.bodies()] == ["u1"]  # refused: the rest of the read is not sent
    state = json.loads(team_state.read_text())
    assert state == {"offset": transcript.stat().st_size, "sent": ["a2", "u1"]}  # handled, for good

    append_lines(transcript, user("u3", "three"))
    assert run_hook(transcript, env) == 0
    assert len(loom.requests) == 1  # verdict cached: no call at all...
    state = json.loads(team_state.read_text())
    assert state == {"offset": transcript.stat().st_size, "sent": ["a2", "u1", "u3"]}  # ...but read

    # Another namespace has its own verdict (and its own record of what was handled).
    loom.mode = "record"
    assert run_hook(transcript, {**env, "LOOM_NAMESPACE": "other"}) == 0
    assert [b["namespace"] for b in loom.bodies()] == ["team", "other", "other", "other"]
    assert run_hook(transcript, env) == 0
    assert len(loom.requests) == 4
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
    assert [b["msg_id"] for b in loom.bodies()] == ["a5", "u6"]  # only turns from after the expiry
    assert run_hook(transcript, env) == 0
    assert len(loom.requests) == 2
    state = json.loads(team_state.read_text())
    assert state == {"offset": transcript.stat().st_size, "sent": ["a2", "a5", "u1", "u3", "u4", "u6"]}


def test_capture_can_be_turned_off_entirely(loom, transcript, tmp_path):
    append_lines(transcript, user("u1", "one"))
    assert run_hook(transcript, env_for(loom.url, tmp_path, LOOM_CAPTURE_CONVERSATIONS="false")) == 0
    assert loom.requests == []
    assert not (tmp_path / "state").exists()


def test_an_unreachable_server_prints_one_line_and_exits_zero(transcript, tmp_path, capsys):
    append_lines(transcript, user("u1", "one"), user("u2", "two"))
    url = unreachable_url()
    assert run_hook(transcript, env_for(url, tmp_path)) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"loom hook: cannot reach {url}/v1/conversation.append")
    assert list((tmp_path / "state").glob("session-*")) == []


def test_a_server_error_stops_the_run_without_marking_turns_sent(loom, transcript, tmp_path, capsys):
    env = env_for(loom.url, tmp_path)
    append_lines(transcript, user("u1", "one"), user("u2", "two"))
    loom.mode = 503
    assert run_hook(transcript, env) == 0
    assert len(loom.requests) == 1
    assert capsys.readouterr().err.startswith("loom hook: HTTP 503")
    loom.mode = "record"
    run_hook(transcript, env)
    assert [b["msg_id"] for b in loom.bodies()] == ["u1", "u1", "u2"]


def test_a_rejected_turn_is_given_up_once_the_server_accepts_others(loom, transcript, tmp_path, capsys):
    env = env_for(loom.url, tmp_path)
    append_lines(transcript, user("u1", "one"), user("u2", "two"), user("u3", "three"))
    loom.reject = {"u2"}
    assert run_hook(transcript, env) == 0
    assert [b["msg_id"] for b in loom.bodies()] == ["u1", "u2", "u3"]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("loom hook: HTTP 422")
    assert err.rstrip().endswith(": content too long (content)")
    run_hook(transcript, env)
    assert len(loom.requests) == 3  # not retried
    assert json.loads(state_file(tmp_path).read_text())["offset"] == transcript.stat().st_size


def test_when_every_turn_is_rejected_the_setup_is_suspected_and_nothing_is_given_up(
    loom, transcript, tmp_path, capsys
):
    env = env_for(loom.url, tmp_path)
    append_lines(transcript, *(user(f"u{i}", f"turn {i}") for i in range(1, 6)))
    loom.mode = 422
    assert run_hook(transcript, env) == 0
    assert len(loom.requests) == 3  # gives up after three refusals in a row
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "HTTP 422" in err and "(and 2 more)" in err
    loom.requests.clear()
    loom.mode = "record"
    run_hook(transcript, env)
    assert [b["msg_id"] for b in loom.bodies()] == ["u1", "u2", "u3", "u4", "u5"]


def test_an_unauthorized_answer_hints_at_the_token(loom, transcript, tmp_path, capsys):
    append_lines(transcript, user("u1", "one"))
    loom.mode = 401
    run_hook(transcript, env_for(loom.url, tmp_path))
    assert "(check LOOM_TOKEN)" in capsys.readouterr().err


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
