"""The capture scripts on a machine without Loom: the Cursor hook and integrations/generic/ingest.sh
with only LOOM_URL and LOOM_TOKEN (no `loom` command on the PATH), against `loom up` over HTTP;
what the Cursor hook could not send while Loom was unreachable goes at its next run, once."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from services.ports import free_port
from tests.e2e.conftest import Loom, running_loom, wait_for

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
NS = "laptop"


@pytest.fixture(scope="module")
def live():
    with running_loom("loom-remote-", recording=(NS,)) as loom:
        yield loom


def laptop(live: Loom, scratch: Path, url: str | None = None) -> dict[str, str]:
    """A user's environment on another machine: no `loom`, Loom's address and a token."""
    token = live.cli("tokens", "create", "--namespace", NS, "--role", "writer").strip()
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(scratch),
        "LOOM_URL": url or f"http://127.0.0.1:{live.port}",
        "LOOM_TOKEN": token,
        "LOOM_NAMESPACE": NS,
    }


def turns(live: Loom, thread: str) -> list[str]:
    rows = live.sql(
        "SELECT content FROM turns WHERE namespace = %s AND thread_id = %s ORDER BY seq", NS, thread
    )
    return [content for (content,) in rows]


def cursor_hook(env: dict, transcript: Path, conversation: str) -> subprocess.CompletedProcess:
    stdin = json.dumps(
        {"conversation_id": conversation, "hook_event_name": "stop", "transcript_path": str(transcript)}
    )
    hook = ROOT / "integrations" / "cursor" / "cursor-session-hook.sh"
    done = subprocess.run(
        ["/bin/sh", str(hook)], input=stdin, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stdout == "{}\n", done
    return done


def said(role: str, words: str) -> str:
    text = f"<user_query>\n{words}\n</user_query>" if role == "user" else words
    return json.dumps({"role": role, "message": {"content": [{"type": "text", "text": text}]}}) + "\n"


def test_the_cursor_hook_sends_over_http_and_keeps_what_it_could_not_send(live, scratch):
    env = laptop(live, scratch)
    transcript = scratch / "agent.jsonl"
    transcript.write_text(
        said("user", "Rename the ledger module") + said("assistant", "Renamed it to accounts.")
    )
    assert cursor_hook(env, transcript, "conv-1").stderr == ""
    wait_for(lambda: len(turns(live, "conv-1")) == 2, 60, "the first piece")
    with transcript.open("a") as fh:
        fh.write(said("user", "Now the imports"))
    unreachable = f"http://127.0.0.1:{free_port()}"
    down = cursor_hook(env | {"LOOM_URL": unreachable}, transcript, "conv-1")
    assert "cannot reach" in down.stderr and "kept for the next run" in down.stderr
    with transcript.open("a") as fh:
        fh.write(said("assistant", "Imports fixed."))
    assert cursor_hook(env, transcript, "conv-1").stderr == ""
    wait_for(lambda: len(turns(live, "conv-1")) == 4, 60, "the pieces of the outage")
    assert turns(live, "conv-1") == [
        "Rename the ledger module",
        "Renamed it to accounts.",
        "Now the imports",
        "Imports fixed.",
    ]


def test_the_generic_script_hands_a_file_over_http(live, scratch):
    env = laptop(live, scratch)
    exported = scratch / "session.md"
    exported.write_text("# user\n\nWhich port does the API use?\n\n# assistant\n\n7777 by default.\n")
    script = ROOT / "integrations" / "generic" / "ingest.sh"
    done = subprocess.run(
        ["/bin/sh", str(script), str(exported), "exported-1"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    wait_for(lambda: len(turns(live, "exported-1")) == 2, 60, "the exported turns")
    refused = subprocess.run(
        ["/bin/sh", str(script), str(exported)],
        env=env | {"LOOM_TOKEN": "loom_nope"},
        capture_output=True,
        text=True,
    )
    assert refused.returncode == 75 and "check LOOM_TOKEN" in refused.stderr
    assert os.path.exists(exported)
