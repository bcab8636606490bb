"""The Claude Code plugin's hooks (Node), run as Claude Code runs them, against a small in-process
HTTP server that answers like Loom's ops. A fake server is fine here: the hooks are client scripts
with no access to the app; their round trips with the real API are the e2e tests'
(tests/e2e/test_claude_code_plugin.py)."""

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.support.claude_code import run_hook

SESSION = "0b5e2a9c-1111-4222-8333-444455556666"


def user(uid, content, **extra):
    return {"type": "user", "uuid": uid, "sessionId": SESSION, "timestamp": "2025-01-01T00:00:01Z",
            "message": {"role": "user", "content": content}, **extra}  # fmt: skip


def assistant(uid, blocks, message_id=None, **extra):
    message = {"role": "assistant", "content": blocks, "id": message_id or f"msg_{uid}"}
    return {"type": "assistant", "uuid": uid, "sessionId": SESSION, "timestamp": "2025-01-01T00:00:09Z",
            "message": message, **extra}  # fmt: skip


def text(value):
    return {"type": "text", "text": value}


def thinking(value):
    return {"type": "thinking", "thinking": value, "signature": "sig"}


class FakeLoom:
    """Records each call (op, auth, body); answers like Loom (an ingest of the same text again:
    duplicate), or with ``mode``: "disabled" (recording off) or an HTTP status to fail with."""

    def __init__(self):
        self.calls, self.mode, self.seen = [], "ok", set()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                op = self.path.removeprefix("/v1/")
                fake.calls.append({"op": op, "auth": self.headers.get("Authorization"), "body": body})
                if isinstance(fake.mode, int):
                    return self.answer(
                        fake.mode, {"error": "nope", **({"field": "namespace"} if fake.mode == 422 else {})}
                    )
                if "TOO-LARGE" in json.dumps(body):
                    return self.answer(413, {"error": "request body over 32 MiB"})
                if op == "conversation.ingest":
                    if fake.mode == "disabled":
                        return self.answer(200, {"stored": False, "reason": "logging_disabled"})
                    duplicate = body["transcript"] in fake.seen
                    fake.seen.add(body["transcript"])
                    return self.answer(
                        200, {"stored": not duplicate, "reason": "duplicate" if duplicate else None}
                    )
                if op in ("session.brief_list", "working_memory.list"):
                    return self.answer(200, {"briefs": [], "blocks": []})
                return self.answer(200, {"ok": True})

            def answer(self, status, payload):
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

    def of(self, op):
        return [call["body"] for call in self.calls if call["op"] == op]

    def uuids(self):
        """The uuids of the entries each ingest carried, a list per request."""
        return [
            [json.loads(line)["uuid"] for line in b["transcript"].splitlines()]
            for b in self.of("conversation.ingest")
        ]


@pytest.fixture
def loom():
    fake = FakeLoom()
    threading.Thread(target=fake.server.serve_forever, args=(0.05,), daemon=True).start()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


@pytest.fixture
def transcript(tmp_path):
    path = tmp_path / f"{SESSION}.jsonl"
    path.write_text("")
    return path


def append(path, *entries):
    with open(path, "a", encoding="utf-8") as fh:
        for entry in entries:
            fh.write(json.dumps(entry) + "\n")


def env_for(url, tmp_path, **extra):
    return {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LOOM_URL": url, "LOOM_TOKEN": "tok",
            "LOOM_NAMESPACE": "team", "LOOM_HOOK_STATE_DIR": str(tmp_path / "state"), **extra}  # fmt: skip


def unreachable():
    with socket.socket() as sock:  # a port that was just free: nothing listens there
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def stop(transcript, env, tmp_path, **payload):
    ran = run_hook(
        "Stop", {"session_id": SESSION, "transcript_path": str(transcript), **payload}, env, tmp_path
    )
    assert ran.returncode == 0 and ran.stdout == ""
    return ran.stderr


def spool(tmp_path):
    return sorted((tmp_path / "state").glob("*/spool/*.json"))


def test_a_stop_sends_the_new_conversation_lines_as_they_were_written(loom, transcript, tmp_path):
    entries = [
        user("u1", "What is 2+2?"),
        {"type": "summary", "summary": "Title", "leafUuid": "x"},
        assistant("a2", [thinking("easy"), text("4")]),
        assistant("a3", [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}]),
        user("u4", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}]),
        user("u5", "injected context", isMeta=True),
        assistant("a6", [text("subagent")], isSidechain=True),
        user("u7", [text("Thanks")]),
    ]
    append(transcript, *entries)
    assert stop(transcript, env_for(loom.url, tmp_path), tmp_path) == ""
    (call,) = loom.calls
    assert (call["op"], call["auth"]) == ("conversation.ingest", "Bearer tok")
    kept = [entries[0], entries[2], entries[7]]  # tool calls and results are never sent
    assert call["body"] == {
        "namespace": "team",
        "agent": "claude-code",
        "thread_id": SESSION,
        "source": f"claude-code {SESSION}",
        "transcript": "".join(json.dumps(e) + "\n" for e in kept),
    }


def test_the_namespace_is_left_to_the_token_when_unset_and_the_agent_can_be_named(loom, transcript, tmp_path):
    append(transcript, user("u1", "hi"))
    env = env_for(loom.url, tmp_path, LOOM_AGENT="my-claude")
    del env["LOOM_NAMESPACE"]
    stop(transcript, env, tmp_path)
    (body,) = loom.of("conversation.ingest")
    assert "namespace" not in body and body["agent"] == "my-claude"


def test_each_stop_sends_only_the_lines_after_the_last_handed_over(loom, transcript, tmp_path):
    env = env_for(loom.url, tmp_path)
    append(transcript, user("u1", "one"), assistant("a2", [text("two")]))
    stop(transcript, env, tmp_path)
    append(transcript, user("u3", "three"), assistant("a4", [text("four")]))
    stop(transcript, env, tmp_path)
    stop(transcript, env, tmp_path)  # nothing new: no request at all
    assert loom.uuids() == [["u1", "a2"], ["u3", "a4"]] and spool(tmp_path) == []


def test_thinking_written_apart_waits_for_the_text_of_its_message(loom, transcript, tmp_path):
    env = env_for(loom.url, tmp_path)
    append(transcript, user("u1", "question"), assistant("a2", [thinking("step one")], message_id="m"))
    stop(transcript, env, tmp_path)
    append(transcript, assistant("a3", [text("reply")], message_id="m"))
    stop(transcript, env, tmp_path)
    assert loom.uuids() == [["u1"], ["a2", "a3"]]  # Loom sees the thinking with its text


def test_a_half_written_last_line_is_left_for_the_next_stop(loom, transcript, tmp_path):
    env = env_for(loom.url, tmp_path)
    append(transcript, user("u1", "hi"))
    half = json.dumps(user("u2", "there"))
    with open(transcript, "a") as fh:
        fh.write(half[:20])
    stop(transcript, env, tmp_path)
    with open(transcript, "a") as fh:
        fh.write(half[20:] + "\nnot json\n")
    stop(transcript, env, tmp_path)
    assert loom.uuids() == [["u1"], ["u2"]]


def test_lost_state_only_causes_a_harmless_duplicate(loom, transcript, tmp_path):
    env = env_for(loom.url, tmp_path)
    append(transcript, user("u1", "one"))
    stop(transcript, env, tmp_path)
    (state,) = (tmp_path / "state").glob("*/session-*.json")
    state.write_text("{corrupt")
    stop(transcript, env, tmp_path)
    assert loom.uuids() == [["u1"], ["u1"]]  # the server answers "duplicate"


def test_while_loom_cannot_be_reached_lines_are_spooled_and_later_sent_in_order_once(
    loom, transcript, tmp_path
):
    env = env_for(loom.url, tmp_path)
    loom.server.shutdown()  # Loom down at its address
    loom.server.server_close()
    append(transcript, user("u1", "one"))
    said = stop(transcript, env, tmp_path)
    assert said.count("\n") == 1 and said.startswith("loom: cannot reach ")
    append(transcript, user("u2", "two"))
    stop(transcript, env, tmp_path)
    assert len(spool(tmp_path)) == 2
    back = FakeLoom.__new__(FakeLoom)  # Loom back at the same address
    FakeLoom.__init__(back)
    back.server.server_close()
    back.server = ThreadingHTTPServer(
        ("127.0.0.1", int(loom.url.rsplit(":", 1)[1])), back.server.RequestHandlerClass
    )
    threading.Thread(target=back.server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        append(transcript, user("u3", "three"))
        assert stop(transcript, env, tmp_path) == ""
        # What waited goes first, in order, with the new line in the same request.
        assert back.uuids() == [["u1", "u2", "u3"]] and spool(tmp_path) == []
    finally:
        back.server.shutdown()
        back.server.server_close()


def test_a_server_error_keeps_the_spool_for_the_next_stop(loom, transcript, tmp_path):
    env = env_for(loom.url, tmp_path)
    append(transcript, user("u1", "one"), user("u2", "two"))
    loom.mode = 503
    assert stop(transcript, env, tmp_path).startswith("loom: HTTP 503")
    assert len(spool(tmp_path)) == 1
    loom.mode = "ok"
    stop(transcript, env, tmp_path)
    assert loom.uuids() == [["u1", "u2"], ["u1", "u2"]] and spool(tmp_path) == []


def test_a_request_refused_as_too_large_is_set_aside_and_the_rest_goes_on(loom, transcript, tmp_path):
    env = env_for(loom.url, tmp_path)
    append(transcript, user("u1", "TOO-LARGE"))
    said = stop(transcript, env, tmp_path)
    assert said.count("\n") == 1 and said.startswith("loom: HTTP 413") and "set aside in" in said
    (aside,) = (tmp_path / "state").glob("*/rejected/*.json")
    assert "TOO-LARGE" in aside.read_text() and spool(tmp_path) == []
    append(transcript, user("u2", "two"))
    assert stop(transcript, env, tmp_path) == ""
    assert loom.uuids()[-1] == ["u2"]


def test_a_refusal_that_points_at_the_setup_keeps_the_spool_and_an_unknown_token_is_named(
    loom, transcript, tmp_path
):
    env = env_for(loom.url, tmp_path)
    append(transcript, user("u1", "one"))
    loom.mode = 422  # naming the namespace
    assert "HTTP 422" in stop(transcript, env, tmp_path) and len(spool(tmp_path)) == 1
    loom.mode = 401
    assert "(check LOOM_TOKEN)" in stop(transcript, env, tmp_path) and len(spool(tmp_path)) == 1
    loom.mode = "ok"
    stop(transcript, env, tmp_path)
    assert spool(tmp_path) == [] and loom.uuids()[-1] == ["u1"]


def test_lines_from_while_recording_is_off_are_never_sent_and_it_is_said_once(loom, transcript, tmp_path):
    env = env_for(loom.url, tmp_path)
    append(transcript, user("u1", "one"))
    loom.mode = "disabled"
    assert stop(transcript, env, tmp_path) == "loom: recording is off for team\n"
    append(transcript, user("u2", "two"))
    assert stop(transcript, env, tmp_path) == ""  # the cached verdict: no call, nothing said again
    assert len(loom.calls) == 1 and spool(tmp_path) == []
    loom.mode = "ok"
    (verdict,) = (tmp_path / "state").glob("*/verdict.json")
    cached = json.loads(verdict.read_text())
    verdict.write_text(json.dumps(cached | {"at": cached["at"] - 61_000}))  # a minute on
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() + 1))
    append(transcript, user("u3", "three", timestamp=now))
    assert stop(transcript, env, tmp_path) == ""
    assert loom.uuids()[-1] == ["u3"]  # only what was said after recording came back


def test_capture_can_be_turned_off_entirely(loom, transcript, tmp_path):
    append(transcript, user("u1", "one"))
    stop(transcript, env_for(loom.url, tmp_path, LOOM_CAPTURE_CONVERSATIONS="false"), tmp_path)
    assert loom.calls == [] and not (tmp_path / "state").exists()


@pytest.mark.parametrize("event", ["Stop", "SessionStart", "PreCompact", "SessionEnd", "PostToolUse"])
@pytest.mark.parametrize("stdin", ["", "not json", "[]", '{"hook_event_name": "x"}'])
def test_bad_hook_input_is_one_line_and_exit_zero(event, stdin, tmp_path):
    import subprocess

    from tests.support.claude_code import PLUGIN, hook_command

    ran = subprocess.run(
        ["sh", "-c", hook_command(event)],
        input=stdin,
        env={**env_for(unreachable(), tmp_path), "CLAUDE_PLUGIN_ROOT": str(PLUGIN)},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert ran.returncode == 0 and ran.stdout == ""
    assert ran.stderr.count("\n") == 1 and ran.stderr.startswith("loom: hook input "), ran.stderr


def test_a_missing_transcript_is_one_line_and_exit_zero(tmp_path):
    said = stop(tmp_path / "gone.jsonl", env_for(unreachable(), tmp_path), tmp_path)
    assert said.startswith("loom: cannot read the transcript") and said.count("\n") == 1


def test_a_tool_action_is_recorded_with_its_digest_one_line_and_files(loom, tmp_path):
    payload = {
        "session_id": SESSION,
        "tool_name": "Edit",
        "tool_input": {"file_path": "/repo/src/a.py", "old_string": "x\ny", "new_string": "z"},
        "tool_response": {"filePath": "/repo/src/a.py"},
        "tool_use_id": "toolu_9",
    }
    ran = run_hook("PostToolUse", payload, env_for(loom.url, tmp_path), tmp_path)
    assert ran.returncode == 0 and ran.stderr == ""
    (body,) = loom.of("observe.record")
    (action,) = body["actions"]
    assert body["session_id"] == SESSION and action["id"] == "toolu_9" and action["tool"] == "Edit"
    assert action["summary"] == "/repo/src/a.py" and action["files"] == ["/repo/src/a.py"]
    assert len(action["input_sha256"]) == 64 and action["outcome"] == "ok"


def test_session_end_spools_and_returns_at_once_even_with_loom_unreachable(transcript, tmp_path):
    append(transcript, user("u1", "Fix it"), assistant("a2", [text("Fixed.")]))
    started = time.monotonic()
    payload = {
        "session_id": SESSION,
        "transcript_path": str(transcript),
        "cwd": str(tmp_path),
        "reason": "other",
    }
    ran = run_hook("SessionEnd", payload, env_for(unreachable(), tmp_path), tmp_path)
    assert ran.returncode == 0 and ran.stdout == "" and ran.stderr == ""
    assert time.monotonic() - started < 1.5  # Claude Code's budget for SessionEnd hooks
    time.sleep(0.5)  # the detached sender tried once, and left the spool as it was
    ops = [json.loads(p.read_text())["op"] for p in spool(tmp_path)]
    assert ops == [
        "conversation.ingest",
        "session.brief_save",
        "working_memory.set",
        "memory.set_from_messages",
        "observe.crystallize",
    ]


def lifecycle(event, transcript, env, tmp_path):
    payload = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(tmp_path)}
    ran = run_hook(event, payload | ({"reason": "other"} if event == "SessionEnd" else {}), env, tmp_path)
    assert ran.returncode == 0 and ran.stdout == "" and ran.stderr == ""


def test_what_claude_code_wrote_after_the_last_stop_goes_at_session_end_and_nothing_twice(
    loom, transcript, tmp_path
):
    env = env_for(loom.url, tmp_path)
    append(transcript, user("u1", "Run the tests"), assistant("a2", [text("Running them.")]))
    stop(transcript, env, tmp_path)  # read before Claude Code flushed the rest
    append(transcript, user("u3", [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]))
    append(transcript, assistant("a4", [text("All pass.")]))
    lifecycle("SessionEnd", transcript, env, tmp_path)
    wait = time.monotonic() + 10
    while len(loom.of("observe.crystallize")) < 1 and time.monotonic() < wait:
        time.sleep(0.05)  # the detached sender
    lifecycle("SessionEnd", transcript, env, tmp_path)  # again: no line a second time
    stop(transcript, env, tmp_path)
    assert loom.uuids() == [["u1", "a2"], ["a4"]]
    ops = [call["op"] for call in loom.calls]
    assert ops.index("conversation.ingest", 1) < ops.index("memory.set_from_messages")


def test_the_session_ends_sender_waits_for_another_run_that_is_sending(loom, transcript, tmp_path):
    env = env_for(loom.url, tmp_path)
    append(transcript, user("u1", "one"))
    stop(transcript, env, tmp_path)
    (spooled,) = (tmp_path / "state").glob("*/spool")
    (spooled / ".lock").write_text("another run")  # e.g. Codex's notify, run beside SessionEnd
    append(transcript, assistant("a2", [text("two")]))
    lifecycle("SessionEnd", transcript, env, tmp_path)
    time.sleep(1)
    assert loom.uuids() == [["u1"]]
    (spooled / ".lock").unlink()
    wait = time.monotonic() + 10
    while not loom.of("observe.crystallize") and time.monotonic() < wait:
        time.sleep(0.05)
    assert loom.uuids() == [["u1"], ["a2"]] and loom.of("observe.crystallize")


def test_a_capture_waits_for_the_run_holding_the_sessions_offsets(loom, transcript, tmp_path):
    import hashlib
    import subprocess

    from tests.support.claude_code import PLUGIN, hook_command

    env = {**env_for(loom.url, tmp_path), "CLAUDE_PLUGIN_ROOT": str(PLUGIN)}
    append(transcript, user("u1", "one"), assistant("a2", [text("two")]))
    state = tmp_path / "state" / hashlib.sha256(f"{loom.url}\nteam".encode()).hexdigest()[:16]
    state.mkdir(parents=True)
    (state / f"session-{SESSION}.lock").write_text("another run")  # e.g. Codex's notify beside SessionEnd
    payload = {"hook_event_name": "Stop", "session_id": SESSION, "transcript_path": str(transcript)}
    run = subprocess.Popen(["sh", "-c", hook_command("Stop")], stdin=subprocess.PIPE, env=env, cwd=tmp_path)
    run.stdin.write(json.dumps(payload).encode())
    run.stdin.close()
    time.sleep(0.4)
    # The holder handed both lines over, then let go.
    (state / f"session-{SESSION}.json").write_text(json.dumps({"captured": transcript.stat().st_size}))
    (state / f"session-{SESSION}.lock").unlink()
    assert run.wait(30) == 0
    assert loom.calls == []


def test_a_compaction_captures_first_and_the_next_stop_goes_on_from_there(loom, transcript, tmp_path):
    env = env_for(loom.url, tmp_path)
    append(transcript, user("u1", "one"), assistant("a2", [text("two")]))
    lifecycle("PreCompact", transcript, env, tmp_path)
    append(transcript, user("u3", "three"))
    stop(transcript, env, tmp_path)
    assert loom.uuids() == [["u1", "a2"], ["u3"]]
    # PreCompact also asks context.pack for the held threads it prints: beside that, capture first.
    asked = [call["op"] for call in loom.calls]
    assert asked[0] == "context.pack"
    assert [op for op in asked if op != "context.pack"][:2] == ["conversation.ingest", "session.brief_save"]


def test_with_capture_off_the_session_end_sends_no_conversation(loom, transcript, tmp_path):
    append(transcript, user("u1", "one"), assistant("a2", [text("two")]))
    lifecycle(
        "SessionEnd", transcript, env_for(unreachable(), tmp_path, LOOM_CAPTURE_CONVERSATIONS="off"), tmp_path
    )
    assert "conversation.ingest" not in [json.loads(p.read_text())["op"] for p in spool(tmp_path)]


def test_the_primer_prints_nothing_when_nothing_is_saved(loom, tmp_path):
    ran = run_hook("SessionStart", {"session_id": SESSION, "cwd": str(tmp_path), "source": "startup"},
                   env_for(loom.url, tmp_path), tmp_path)  # fmt: skip
    assert ran.returncode == 0 and ran.stdout == "" and ran.stderr == ""
    asked = {call["op"] for call in loom.calls}
    assert asked == {"context.pack", "session.brief_list", "working_memory.list"}


def test_the_plugin_holds_what_claude_code_reads():
    from tests.support.claude_code import MARKETPLACE, PLUGIN

    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    market = json.loads((MARKETPLACE / ".claude-plugin" / "marketplace.json").read_text())
    assert manifest["name"] == "loom" and "hooks" not in manifest  # hooks/hooks.json loads by itself
    assert [(p["name"], p["source"]) for p in market["plugins"]] == [("loom", "./loom")]
    assert (
        (PLUGIN / "skills" / "loom-session" / "SKILL.md").read_text().startswith("---\nname: loom-session\n")
    )
    servers = json.loads((PLUGIN / ".mcp.json").read_text())["mcpServers"]
    assert servers["loom"]["url"].endswith("/mcp")
    assert not list(Path(PLUGIN).rglob("package.json"))  # no dependencies to install
