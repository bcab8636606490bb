"""The Cursor hook as Cursor runs it (a shell script reading its input on stdin), handing pieces of
the conversation's transcript to a real `loom ingest-transcript` process and a real worker: only
what is new each time, spooled while Loom is not running and sent later in order, exactly once."""

import json
import os
import subprocess
import sys
from pathlib import Path

from sqlmodel import col, select

from models import db
from models.conversation import Turn
from tests.support.calls import enable_logging
from tests.support.waits import wait_until

ROOT = Path(__file__).resolve().parents[2]
HOOK = ROOT / "integrations" / "cursor" / "cursor-session-hook.sh"
NS = "cursor-capture"


def setup_module():
    enable_logging(NS)


def loom_bin(tmp_path: Path, exit_code: int | None = None) -> Path:
    """The `loom` command the hook calls: the real CLI, or one that says Loom is not running."""
    path = tmp_path / (f"loom-exits-{exit_code}" if exit_code else "loom")
    if exit_code:
        path.write_text(f"#!/bin/sh\necho 'error: Loom is not running' >&2\nexit {exit_code}\n")
    else:
        path.write_text(f'#!/bin/sh\ncd "{ROOT}" && exec "{sys.executable}" -m cli "$@"\n')
    path.chmod(0o755)
    return path


def run_hook(
    transcript: Path, tmp_path: Path, loom: Path, conversation: str | None = None
) -> subprocess.CompletedProcess:
    env = {
        **{
            k: v for k, v in os.environ.items() if k not in ("LOOM_URL", "LOOM_TOKEN")
        },  # the Loom host's path
        "LOOM_NAMESPACE": NS,
        "LOOM_BIN": str(loom),
        "LOOM_PYTHON": sys.executable,
        "LOOM_HOOK_STATE_DIR": str(tmp_path / "state"),
    }
    stdin = json.dumps(
        {
            "conversation_id": conversation or transcript.stem,  # one conversation a test
            "generation_id": "g-1",
            "hook_event_name": "stop",
            "status": "completed",
            "workspace_roots": [str(tmp_path)],
            "transcript_path": str(transcript),
        }
    )
    done = subprocess.run(
        ["/bin/sh", str(HOOK)], input=stdin, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and done.stdout == "{}\n", done
    return done


def stored(thread: str) -> list[tuple[str, str, str]]:
    with db.session() as s:
        rows = s.exec(
            select(Turn)
            .where(Turn.namespace == NS, Turn.thread_id == thread)
            .order_by(col(Turn.ts), col(Turn.id))
        )
        return [(t.msg_id, t.role, t.content) for t in rows]


def spool(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in (tmp_path / "state").glob("ns-*/spool/*--*"))


def said(role: str, words: str) -> str:
    text = f"<user_query>\n{words}\n</user_query>" if role == "user" else words
    return json.dumps({"role": role, "message": {"content": [{"type": "text", "text": text}]}}) + "\n"


def test_an_agent_transcript_goes_in_pieces_spooled_while_loom_is_down_and_sent_in_order_once(
    tmp_path, worker
):
    transcript = tmp_path / "cdefee2d-2727-4b73-bf77-d9d830f31d2a.jsonl"
    transcript.write_text(said("user", "why is CI red") + said("assistant", "the lockfile is stale"))
    run_hook(transcript, tmp_path, loom_bin(tmp_path))
    wait_until(lambda: len(stored(transcript.stem)) == 2)
    assert stored(transcript.stem) == [
        ("line1", "user", "why is CI red"),
        ("line2", "assistant", "the lockfile is stale"),
    ]

    down = loom_bin(tmp_path, exit_code=75)
    with transcript.open("a") as f:
        f.write(said("user", "regenerate it"))
    first = run_hook(transcript, tmp_path, down)
    assert "kept for the next run" in first.stderr
    with transcript.open("a") as f:
        f.write(said("assistant", "done, CI is green"))
        f.write('{"role": "user", "mess')  # half written: waits for the next run
    run_hook(transcript, tmp_path, down)
    assert len(spool(tmp_path)) == 2 and len(stored(transcript.stem)) == 2

    run_hook(transcript, tmp_path, loom_bin(tmp_path))
    assert spool(tmp_path) == []
    wait_until(lambda: len(stored(transcript.stem)) == 4)
    assert [m for m, _, _ in stored(transcript.stem)] == ["line1", "line2", "line3", "line4"]
    run_hook(transcript, tmp_path, loom_bin(tmp_path))  # nothing new: nothing sent, nothing doubled
    assert len(stored(transcript.stem)) == 4 and spool(tmp_path) == []


EXPORT = """# CI is red
_Exported on 11/30/2026 at 10:13:33 GMT+1 from Cursor (2.2.44)_

---

**User**

why is CI red

---

**Cursor**

The lockfile is stale: run `npm install` and commit it.
"""


def test_a_cursor_export_is_sent_when_it_changed_and_only_its_new_turns_are_added(tmp_path, worker):
    export = tmp_path / "ci-is-red.md"
    export.write_text(EXPORT)
    run_hook(export, tmp_path, loom_bin(tmp_path))
    wait_until(lambda: len(stored(export.stem)) == 2)
    assert [(r, c[:20]) for _, r, c in stored(export.stem)] == [
        ("user", "why is CI red"),
        ("assistant", "The lockfile is stal"),
    ]
    run_hook(export, tmp_path, loom_bin(tmp_path))  # unchanged: not sent again
    export.write_text(EXPORT + "\n---\n\n**User**\n\nthanks, green now\n")
    run_hook(export, tmp_path, loom_bin(tmp_path))
    wait_until(lambda: len(stored(export.stem)) == 3)
    assert stored(export.stem)[-1][1:] == ("user", "thanks, green now")


def test_a_piece_loom_refuses_is_set_aside_and_the_rest_goes_on(tmp_path, worker):
    transcript = tmp_path / "refused.jsonl"
    transcript.write_text('{"neither": "type nor role"}\n')
    done = run_hook(transcript, tmp_path, loom_bin(tmp_path))
    assert "set aside in" in done.stderr and done.stderr.count("\n") == 1
    assert spool(tmp_path) == [] and len(list((tmp_path / "state").glob("ns-*/rejected/*"))) == 1


def test_odd_names_and_a_transcript_without_an_extension_are_sent(tmp_path, worker):
    folder = tmp_path / "exports.v2"
    folder.mkdir()
    export = folder / "chat"  # no extension, in a folder with a dot
    export.write_text(EXPORT)
    run_hook(export, tmp_path, loom_bin(tmp_path), conversation="odd--id-")
    wait_until(lambda: len(stored("odd--id-")) == 2)
    assert spool(tmp_path) == []


def test_an_unexpected_failure_of_loom_keeps_the_piece_for_the_next_run(tmp_path, worker):
    transcript = tmp_path / "kept.jsonl"
    transcript.write_text(said("user", "is the cache warm"))
    first = run_hook(transcript, tmp_path, loom_bin(tmp_path, exit_code=1))
    assert "kept for the next run" in first.stderr and len(spool(tmp_path)) == 1
    run_hook(transcript, tmp_path, loom_bin(tmp_path))
    wait_until(lambda: len(stored(transcript.stem)) == 1)
    assert spool(tmp_path) == [] and list((tmp_path / "state").glob("ns-*/rejected/*")) == []


def test_a_lock_left_by_a_killed_run_is_taken_over_but_a_live_one_is_not(tmp_path, worker):
    transcript = tmp_path / "locked.jsonl"
    transcript.write_text(said("user", "who holds the lock"))
    lock = tmp_path / "state" / f"ns-{NS}" / "spool" / ".lock"
    lock.mkdir(parents=True)
    (lock / "pid").write_text(f"{os.getpid()}\n")  # a live process holds it
    run_hook(transcript, tmp_path, loom_bin(tmp_path))
    assert len(spool(tmp_path)) == 1  # left for the holder
    (lock / "pid").write_text("999999999\n")  # no such process: a killed run's
    run_hook(transcript, tmp_path, loom_bin(tmp_path))
    wait_until(lambda: len(stored(transcript.stem)) == 1)
    assert spool(tmp_path) == [] and not lock.exists()
