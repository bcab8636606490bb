"""The Claude Code plugin's Stop hook as Claude Code runs it (hooks.json's command, its input on
stdin), against the real API over HTTP and a real worker: each Stop hands the new lines over in one
conversation.ingest request, and the worker appends them as turns keyed by the entries' uuids."""

import json
import subprocess
from pathlib import Path

from sqlmodel import col, select

from models import db
from models.conversation import Turn
from models.transcript import Transcript
from ops.caller import create_token
from tests.support.calls import enable_logging
from tests.support.claude_code import run_hook as run_plugin_hook
from tests.support.waits import wait_until

SESSION = "5f0c1d2e-aaaa-4bbb-8ccc-ddddeeeeffff"


def entry(uuid: str, role: str, text: str) -> dict:
    content = text if role == "user" else [{"type": "text", "text": text}]
    return {
        "type": role,
        "uuid": uuid,
        "sessionId": SESSION,
        "timestamp": "2026-11-30T10:00:00.125Z",
        "message": {"role": role, "content": content},
    }


def run_hook(live_api: str, transcript: Path, tmp_path: Path, token: str) -> subprocess.CompletedProcess:
    env = {
        "LOOM_URL": live_api,
        "LOOM_TOKEN": token,
        "LOOM_HOOK_STATE_DIR": str(tmp_path / "state"),
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
    }
    payload = {"session_id": SESSION, "transcript_path": str(transcript)}
    return run_plugin_hook("Stop", payload, env, tmp_path)


def stored() -> list[tuple[str, str, str, str]]:
    with db.session() as s:
        rows = s.exec(select(Turn).where(Turn.namespace == "cc").order_by(col(Turn.id)))
        return [(t.msg_id, t.role, t.content, t.agent) for t in rows]


def requests_made() -> list[str]:
    with db.session() as s:
        rows = s.exec(select(Transcript).where(Transcript.namespace == "cc").order_by(col(Transcript.id)))
        return [t.raw for t in rows]


def test_each_stop_hands_the_new_lines_over_once_and_the_worker_appends_them(live_api, tmp_path, worker):
    enable_logging("cc")
    token = create_token(["cc"], "writer")
    transcript = tmp_path / "session.jsonl"
    lines = [
        entry("u-1", "user", "Fix the flaky test"),
        entry("a-1", "assistant", "Done: it raced the broker."),
    ]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))

    first = run_hook(live_api, transcript, tmp_path, token)
    assert first.returncode == 0 and first.stderr == ""
    wait_until(lambda: len(stored()) == 2)
    assert stored() == [
        ("u-1", "user", "Fix the flaky test", "claude-code"),
        ("a-1", "assistant", "Done: it raced the broker.", "claude-code"),
    ]
    with db.session() as s:
        (said,) = s.exec(select(Turn.ts).where(Turn.namespace == "cc", Turn.msg_id == "u-1")).all()
    assert said.isoformat() == "2026-11-30T10:00:00.125000+00:00"  # when it was said, not imported

    assert run_hook(live_api, transcript, tmp_path, token).returncode == 0
    assert len(requests_made()) == 1  # nothing new: no request

    with transcript.open("a") as f:
        f.write(json.dumps(entry("u-2", "user", "Thanks")) + "\n")
    # A request sent again (a hook killed after sending, before clearing its spool) adds nothing.
    (spool,) = (tmp_path / "state").glob("*/spool")
    assert run_hook(live_api, transcript, tmp_path, token).returncode == 0
    assert [json.loads(raw)["uuid"] for raw in requests_made()[1].splitlines()] == ["u-2"]
    (spool / "000000000000001-000000-1.json").write_text(
        json.dumps(
            {
                "op": "conversation.ingest",
                "body": {"agent": "claude-code", "thread_id": SESSION, "transcript": requests_made()[1]},
            }
        )
    )
    assert run_hook(live_api, transcript, tmp_path, token).returncode == 0
    assert list(spool.glob("*.json")) == []
    wait_until(lambda: len(stored()) == 3)
    assert [row[0] for row in stored()] == ["u-1", "a-1", "u-2"]
    assert len(requests_made()) == 2
    with db.session() as s:
        assert s.exec(select(Turn.thread_id).where(Turn.namespace == "cc")).unique().all() == [SESSION]
