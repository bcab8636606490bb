"""What the operator CLI prints fits the terminal and says how a wait goes: the listings' tables at
80 columns (every kept value whole, no line longer) and at 200 (every column), ``--json`` whole
whatever the width, progress of a --wait on stderr (plain lines through a pipe, a bar on a
terminal), and ``loom --help`` grouped by task."""

import contextlib
import json
import os
import pty
import re
import select
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import text
from typer.testing import CliRunner

import commands.console  # noqa: F401  its consoles built now, as a process builds them: before COLUMNS is set below
from cli import app
from commands import progress
from models import db
from models.memory import Loom, NightWeaving
from models.pass_run import PassRun
from models.stage_run import StageRun
from ops.caller import OPERATOR
from ops.registry import call
from tests.support.calls import append, enable_logging

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()

ERROR = "LLMUnavailable: the model endpoint answered 503 Service Unavailable three times in a row " * 3
WEAVING, LOOM = uuid.uuid4(), uuid.uuid4()
SUBJECT = f"loom_session:{uuid.uuid4()}"

# The runs of the long values' stage alone: a test of this module run before (pytest-randomly
# orders them) may leave more than a page of newer runs of other stages.
TABLES = {
    ("status",): ("stage", "pending", "running", "failed", "oldest pending", "queued", "delayed", "dead"),
    ("passes", "list"): ("pass", "trigger", "next", "last started", "finished", "sent", "by", "error"),
    ("night-weave", "list"): (
        "id",
        "loom",
        "started",
        "finished",
        "sessions",
        "consolidated",
        "episodes",
        "judged",
        "by",
    ),
    ("runs", "list", "--stage", "memory_embedding"): (
        "id",
        "stage",
        "subject",
        "status",
        "attempts",
        "updated",
        "reason / last error",
    ),
}


@pytest.fixture(scope="module")
def long_values() -> dict[str, object]:
    """A pass's firing, a night weaving and a stage run, each with values as long as they get."""
    now = datetime.now(UTC)
    with db.session() as s:
        s.add(
            PassRun(
                name="night_weaving", started_at=now, finished_at=now, sent=123456, error=ERROR, by="operator"
            )
        )
        s.add(Loom(id=LOOM, namespace="long-values", name="a loom"))
        s.flush()  # the loom before its weaving
        s.add(
            NightWeaving(
                id=WEAVING,
                loom_id=LOOM,
                started_at=now,
                finished_at=now,
                sessions=123456,
                consolidated=123456,
                episodes=123456,
                judged=123456,
                used=654321,
                by="scheduler",
            )
        )
        run = StageRun(
            stage="memory_embedding",
            subject=SUBJECT,
            idem_key=f"long-values-{uuid.uuid4()}",
            status="succeeded",
            attempts=123,
            last_error=ERROR,
        )
        s.add(run)
        s.flush()
        return {"run_id": run.id, "at": now}


def shown(args: tuple[str, ...], columns: int) -> str:
    result = runner.invoke(app, list(args), env={"COLUMNS": str(columns)})
    assert result.exit_code in (0, 1), result.output  # status: 1, as no API runs here
    return result.stdout


def table_of(args: tuple[str, ...], output: str) -> list[str]:
    """The table's lines (``loom status`` prints its services and rates around it)."""
    lines = output.splitlines()
    if args != ("status",):
        return lines
    assert [line.split()[0] for line in lines[:3]] == ["database", "broker", "api"]
    return lines[3 : next(i for i, line in enumerate(lines) if line.startswith("embedder"))]


@pytest.mark.parametrize("args", list(TABLES))
def test_at_80_columns_every_kept_value_is_whole_and_no_line_is_longer(args, long_values):
    lines = table_of(args, shown(args, 80))
    assert lines and max(len(line) for line in lines) <= 80, "\n".join(lines)
    assert not any("…" in line for line in lines), "\n".join(lines)
    text = "\n".join(lines)
    whole = {
        ("status",): ["memory_embedding", "night_weaving", "brief_window", "thread_index"],
        ("passes", "list"): ["night_weaving", "123456", long_values["at"].strftime("%m-%d %H:%M")],
        ("night-weave", "list"): [str(WEAVING), long_values["at"].strftime("%m-%d %H:%M"), "123456"],
        ("runs", "list", "--stage", "memory_embedding"): [
            str(long_values["run_id"]),
            "memory_embedding",
            "succeeded",
        ],
    }[args]
    for value in whole:
        assert value in text, (value, text)


@pytest.mark.parametrize("args", list(TABLES))
def test_at_200_columns_every_column_shows(args, long_values):
    text = "\n".join(table_of(args, shown(args, 200)))
    for header in TABLES[args]:
        assert header in text, (header, text)
    assert "…" not in text


def test_json_is_whole_whatever_the_width(long_values):
    def json_of(*args: str) -> str:
        result = runner.invoke(app, [*args, "--json"], env={"COLUMNS": "40"})
        assert result.exit_code in (0, 1), result.output
        return result.stdout

    status = json.loads(json_of("status"))
    assert {"memory_embedding", "night_weaving", "embedding"} <= set(status["stages"])
    assert set(status["services"]) == {"database", "broker", "api"} and status["services"]["database"]["up"]
    assert set(status["stages"]["embedding"]["runs"]) >= {"pending", "running", "failed"}

    passes = {p["name"]: p for p in map(json.loads, json_of("passes", "list").splitlines())}
    assert passes["night_weaving"]["error"] == ERROR and passes["night_weaving"]["sent"] == 123456
    assert passes["night_weaving"]["trigger"] == "0 3 * * * (UTC)" and passes["night_weaving"]["next_at"]

    (night,) = [
        w for w in map(json.loads, json_of("night-weave", "list").splitlines()) if w["id"] == str(WEAVING)
    ]
    assert night["loom_id"] == str(LOOM) and night["used"] == 654321 and night["by"] == "scheduler"

    listed = json.loads(json_of("runs", "list", "--stage", "memory_embedding"))
    (run,) = [r for r in listed if r["id"] == long_values["run_id"]]
    assert (run["subject"], run["last_error"], run["attempts"]) == (SUBJECT, ERROR, 123)


def test_help_groups_the_commands_by_task():
    helped = runner.invoke(app, ["--help"], env={"COLUMNS": "100"})
    assert helped.exit_code == 0
    panels = re.findall(r"╭─ (.+?) ─", helped.stdout)
    assert panels == [
        "Options",
        "Run Loom",
        "Capture and search",
        "Memory and briefs",
        "Operate: runs and passes",
        "Tokens and namespaces",
        "Data: backup, erasure",
        "Coding-session threads",
    ]
    assert "Commands" not in panels  # every command is in a group


# --- progress of a wait ---------------------------------------------------------------------------

PROGRESS = re.compile(r"^titler: (\d+)/(\d+) runs done, (\d+) failed, .+$")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")  # a terminal's colours and cursor moves
CHILD_ENV = {"PYTHONUNBUFFERED": "1", "TERM": "xterm"}  # "sent …" is read as soon as it is printed
ALONE = progress.SHOWN_AFTER + 1.5  # seconds the wait runs with no worker: long enough to be shown


def untitled_thread(name: str) -> None:
    enable_logging("progress")
    for content in ("where do the nightly backups go", "to the cold bucket", "for how long", "ninety days"):
        append("progress", name, content)


@contextlib.contextmanager
def a_worker() -> Iterator[None]:
    """A worker started now, once the wait has begun with nothing to do its runs (so that it lasts
    long enough to show progress); the titler's messages wait for it in the queue."""
    from workers.runner import new_worker, stop

    w = new_worker(threads=2)
    w.start()
    try:
        yield
    finally:
        stop(w, timeout_ms=10_000)


def titler_waiting(**streams) -> subprocess.Popen:
    command = [sys.executable, "-m", "cli", "passes", "run", "titler", "--wait", "--timeout", "60"]
    return subprocess.Popen(command, cwd=ROOT, env={**os.environ, **CHILD_ENV}, **streams)


def test_a_wait_into_a_pipe_says_its_progress_in_plain_lines_on_stderr(llm):
    untitled_thread("piped")
    waiting = titler_waiting(stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert waiting.stdout.readline() == "titler: sent 1 runs\n"
    time.sleep(ALONE)
    with a_worker():
        stdout, stderr = waiting.communicate(timeout=60)
    assert waiting.returncode == 0, stderr
    assert stdout == "1 succeeded\n"  # stdout: the result alone
    said = [PROGRESS.match(line) for line in stderr.splitlines()]
    assert len(said) >= 2 and all(said), stderr  # one while waiting, one when done
    assert [int(n) for n in said[0].groups()] == [0, 1, 0]
    assert [int(n) for n in said[-1].groups()] == [1, 1, 0]


def test_a_wait_on_a_terminal_shows_a_progress_bar(llm):
    untitled_thread("on-a-terminal")
    parent, child = pty.openpty()
    waiting = titler_waiting(stdin=child, stdout=child, stderr=child)
    os.close(child)
    seen = read_until(parent, "sent 1 runs")
    time.sleep(ALONE)
    with a_worker():
        seen += read_until(parent, None)
        assert waiting.wait(timeout=60) == 0, seen
    os.close(parent)
    screen = ANSI.sub("", seen.decode(errors="replace"))
    assert "━" in screen and "titler" in screen, screen  # the bar, and what it waits for
    assert "0/1 runs done" in screen and "1/1 runs done" in screen, screen
    assert "1 succeeded" in screen


INGESTED = 4_000
TURNS_DONE = re.compile(r"([\d,]+)/([\d,]+) turns done")


def test_an_ingest_waited_on_a_terminal_counts_its_turns(tmp_path):
    """A 4,000-turn file is one run: its progress is in turns, as far as the worker got."""
    enable_logging("ingest-progress")
    transcript = tmp_path / "long-session.json"
    said = [
        {"role": ("user", "assistant")[i % 2], "content": f"step {i} of the cutover"} for i in range(INGESTED)
    ]
    transcript.write_text(json.dumps(said))
    command = [sys.executable, "-m", "cli", "ingest-transcript", "--namespace", "ingest-progress"]
    parent, child = pty.openpty()
    with a_worker():
        waiting = subprocess.Popen(
            [*command, "--file", str(transcript), "--wait"],
            cwd=ROOT,
            env={**os.environ, **CHILD_ENV},
            stdin=child,
            stdout=child,
            stderr=child,
        )
        os.close(child)
        seen = read_until(parent, None, timeout=120)
        assert waiting.wait(timeout=60) == 0, seen
    os.close(parent)
    screen = ANSI.sub("", seen.decode(errors="replace"))
    counts = [
        (int(done.replace(",", "")), int(of.replace(",", ""))) for done, of in TURNS_DONE.findall(screen)
    ]
    assert counts and counts[-1] == (INGESTED, INGESTED), screen
    assert any(0 < done < INGESTED for done, _ in counts), screen  # seen midway, not only at the end
    appended = re.search(rf"thread (\S+): {INGESTED} turns appended, 0 already there", screen)
    assert appended, screen
    # Nothing left for the other tests of this process: an untitled thread for their titler, 4,000
    # embedding runs pending for those that wait for the ledger to settle.
    thread = appended.group(1)
    call(
        "conversation.delete",
        OPERATOR,
        {"namespace": "ingest-progress", "thread_id": thread, "confirm_thread_id": thread},
    )
    with db.session() as s:
        s.execute(
            text(
                "DELETE FROM stage_runs WHERE stage = 'embedding' AND status = 'pending' AND subject IN "
                "(SELECT 'embedding:' || e.id FROM embeddings e JOIN turns t ON t.id = e.turn_id "
                "WHERE t.namespace = 'ingest-progress')"
            )
        )


def read_until(fd: int, wanted: str | None, timeout: float = 60) -> bytes:
    """What the terminal is sent until it shows ``wanted`` (None: until the program ends)."""
    seen = b""
    deadline = time.monotonic() + timeout
    while wanted is None or wanted not in ANSI.sub("", seen.decode(errors="replace")):
        assert time.monotonic() < deadline, seen
        if select.select([fd], [], [], 0.5)[0]:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the program ended: its side of the terminal closed
                chunk = b""
            if not chunk:
                assert wanted is None, seen
                return seen
            seen += chunk
    return seen
