"""The operator CLI, in-process against the embedded servers: tokens, recording, transcripts,
runs."""

import json
from datetime import timedelta

import pytest
from sqlalchemy import text
from sqlmodel import func, select
from typer.testing import CliRunner

from cli import app
from commands import runs as runs_command
from models import db
from models.base import utcnow
from models.conversation import Turn
from models.stage_run import FAILED, PENDING, SUCCEEDED, StageRun
from ops.caller import authenticate
from tests.support.calls import append, enable_logging
from tests.support.rows import embedding_subject
from workers import ledger

runner = CliRunner()

TRANSCRIPT = """# user
How do I rotate the export job's schedule?

# assistant
Edit the cron line in jobs.yaml and redeploy.

# user
Thanks!
"""


def loom(*args: str):
    return runner.invoke(app, list(args))


def turns(namespace: str) -> int:
    with db.session() as s:
        return s.exec(select(func.count()).where(Turn.namespace == namespace)).one()


def test_tokens_create_prints_only_the_token_and_it_carries_the_role_and_namespaces():
    result = loom("tokens", "create", "--namespace", "a", "--namespace", "b", "--role", "viewer")
    assert result.exit_code == 0
    (token,) = result.stdout.split()
    assert result.stdout == token + "\n"
    caller = authenticate(f"Bearer {token}")
    assert caller.role == "viewer" and caller.namespaces == ("a", "b")


def test_tokens_create_says_on_stderr_whether_its_namespaces_record_and_how_to_turn_it_on():
    quiet = loom("tokens", "create", "--namespace", "unrecorded-ns")
    assert quiet.exit_code == 0 and len(quiet.stdout.split()) == 1  # stdout: the token alone
    assert "unrecorded-ns does not record conversations" in quiet.stderr
    assert "loom namespaces logging unrecorded-ns --on" in quiet.stderr and "--recording" in quiet.stderr

    enable_logging("recorded-ns")
    said = loom("tokens", "create", "--namespace", "recorded-ns").stderr
    assert "recorded-ns records conversations" in said and "--on" not in said


def test_tokens_create_with_recording_mints_and_switches_recording_on_at_once():
    minted = loom("tokens", "create", "--namespace", "switched-on", "--recording")
    assert minted.exit_code == 0, minted.output
    token = minted.stdout.strip()
    assert authenticate(f"Bearer {token}").namespaces == ("switched-on",)
    assert "switched-on records conversations" in minted.stderr
    assert append("switched-on", "t", "kept from the first turn")["stored"]
    refused = loom("tokens", "create", "--all-namespaces", "--role", "admin", "--recording")
    assert refused.exit_code == 2 and "--recording" in refused.stderr and refused.stdout == ""


def test_a_token_minted_with_a_user_id_speaks_for_that_user_and_lists_it():
    result = loom("tokens", "create", "--namespace", "a", "--user-id", "cy")
    assert result.exit_code == 0, result.output
    caller = authenticate(f"Bearer {result.stdout.strip()}")
    assert caller.speaks_for == "cy" and caller.user_id is None  # not pinned: reads stay namespace-wide
    listed = [json.loads(line) for line in loom("tokens", "list", "--json").stdout.splitlines()]
    assert listed[-1]["user_id"] == "cy" and listed[-1]["read_user_id"] is None


def test_a_bad_role_is_one_line_and_a_non_zero_exit():
    result = loom("tokens", "create", "--namespace", "a", "--role", "root")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.strip().count("\n") == 0 and "role must be one of" in result.stderr


def test_ingesting_a_transcript_twice_adds_nothing(tmp_path, worker):
    path = tmp_path / "session.md"
    path.write_text(TRANSCRIPT)
    assert loom("namespaces", "logging", "cap", "--on").exit_code == 0
    first = loom("ingest-transcript", "--namespace", "cap", "--file", str(path), "--wait")
    assert first.exit_code == 0, first.output
    assert "3 turns appended, 0 already there" in first.stdout
    second = loom("ingest-transcript", "--namespace", "cap", "--file", str(path), "--wait")
    assert second.exit_code == 0 and "this file was handed over before" in second.stdout
    assert turns("cap") == 3


def test_a_json_transcript_with_a_thread_id_lands_in_that_thread(tmp_path, worker):
    path = tmp_path / "session.json"
    path.write_text(
        json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])
    )
    enable_logging("capjson")
    result = loom(
        "ingest-transcript", "--namespace", "capjson", "--file", str(path), "--thread-id", "fixed", "--wait"
    )
    assert result.exit_code == 0 and "thread fixed: 2 turns appended" in result.stdout
    with db.session() as s:
        assert set(s.exec(select(Turn.thread_id).where(Turn.namespace == "capjson"))) == {"fixed"}


def test_a_dry_run_only_counts(tmp_path):
    path = tmp_path / "session.md"
    path.write_text(TRANSCRIPT)
    result = loom("ingest-transcript", "--namespace", "dry", "--file", str(path), "--dry-run")
    assert result.exit_code == 0 and "3 turns would be appended" in result.stdout
    assert turns("dry") == 0


def test_a_malformed_transcript_names_its_line_and_writes_nothing(tmp_path):
    path = tmp_path / "broken.md"
    path.write_text("# user\nfine\n\n# assistant\n\n# user\nagain\n")
    enable_logging("broken")
    result = loom("ingest-transcript", "--namespace", "broken", "--file", str(path))
    assert result.exit_code != 0
    assert len(result.stderr.strip().splitlines()) == 1 and "line 4" in result.stderr
    assert turns("broken") == 0


def test_ingesting_into_a_namespace_that_does_not_record_is_refused(tmp_path):
    path = tmp_path / "session.md"
    path.write_text(TRANSCRIPT)
    result = loom("ingest-transcript", "--namespace", "silent", "--file", str(path))
    assert result.exit_code == 77 and "does not record" in result.stderr  # a capture hook drops the input
    assert turns("silent") == 0


def run_with_status(namespace: str, content: str, status: str, **fields) -> int:
    """A turn of its own and its embedding run, set to ``status``: the run's id."""
    enable_logging(namespace)
    turn_id = append(namespace, "t", content)["turn_id"]
    with db.session() as s:
        run = s.exec(select(StageRun).where(StageRun.subject == embedding_subject(turn_id))).one()
        run.status = status
        for name, value in fields.items():
            setattr(run, name, value)
        s.add(run)
    return run.id


@pytest.fixture
def failed_run(request) -> int:
    return run_with_status(
        "ops",
        f"a turn whose run failed in {request.node.name}",
        FAILED,
        attempts=3,
        last_error="EmbedderUnavailable: down",
    )


def test_runs_list_show_and_retry(failed_run):
    listed = loom("runs", "list", "--failed", "--json")
    assert listed.exit_code == 0
    assert [(r["id"], r["last_error"]) for r in json.loads(listed.stdout)] == [
        (failed_run, "EmbedderUnavailable: down")
    ]
    table = loom("runs", "list", "--status", "failed").stdout
    assert [str(failed_run), "embedding"] in [line.split()[:2] for line in table.splitlines()]
    shown = json.loads(loom("runs", "show", str(failed_run), "--json").stdout)
    assert (shown["status"], shown["last_error"]) == (FAILED, "EmbedderUnavailable: down")
    retried = loom("runs", "retry", str(failed_run))
    assert retried.exit_code == 0 and "queued again" in retried.stdout
    assert json.loads(loom("runs", "show", str(failed_run), "--json").stdout)["status"] == PENDING
    again = loom("runs", "retry", str(failed_run))
    assert again.exit_code == 0 and "already pending" in again.stdout


def test_a_run_that_succeeded_on_retry_shows_its_state_first_then_its_failed_attempts():
    history = [
        {"attempt": 1, "at": "2026-12-01T10:00:00+00:00", "error": "EmbedderUnavailable: down"},
        {"attempt": 2, "at": "2026-12-01T10:00:05+00:00", "error": "TimeoutError: slow"},
    ]
    run_id = run_with_status(
        "ops", "a turn whose third attempt succeeded", SUCCEEDED, attempts=3, last_error="TimeoutError: slow",
        history=history,
    )  # fmt: skip
    shown = loom("runs", "show", str(run_id), "--json")
    assert json.loads(shown.stdout)["history"] == history
    lines = loom("runs", "show", str(run_id)).stdout.splitlines()
    status = next(i for i, line in enumerate(lines) if line.startswith("status"))
    assert "succeeded" in lines[status] and "3 attempts" in lines[status]
    attempts = [line.split() for line in lines[lines.index("failed attempts:") + 1 :]]
    assert status < lines.index("failed attempts:")
    assert [(a[0], a[1], a[-1]) for a in attempts] == [
        ("1", "2026-12-01T10:00:00+00:00", "down"),
        ("2", "2026-12-01T10:00:05+00:00", "slow"),
    ]
    listed = loom("runs", "list", "--status", "succeeded").stdout  # no old error shown as current
    assert not any(line.split()[:1] == [str(run_id)] and "slow" in line for line in listed.splitlines())


def test_runs_retry_by_stage_requeues_every_failed_run_and_leaves_succeeded_ones(failed_run):
    succeeded = run_with_status("ops", "a turn whose run succeeded", SUCCEEDED, attempts=1)
    result = loom("runs", "retry", "--stage", "embedding", "--status", "failed")
    assert result.exit_code == 0 and "1 embedding runs queued again" in result.stdout
    with db.session() as s:
        assert s.get(StageRun, failed_run).status == PENDING
        assert s.get(StageRun, succeeded).status == SUCCEEDED
    noop = loom("runs", "retry", str(succeeded))
    assert noop.exit_code == 0 and "already succeeded; nothing to do" in noop.stdout


def test_runs_list_pages_through_runs_list_as_the_ledger_reads_them(monkeypatch):
    enable_logging("paged")
    since = utcnow() - timedelta(seconds=1)
    for n in range(5):
        append("paged", "t", f"a turn for a page of runs, {n}")
    monkeypatch.setattr(runs_command, "PAGE_MAX", 2)  # the op's pages, made small
    for args, wanted in [
        (("--limit", "5"), ledger.select_runs(limit=5)),
        (("--since", since.isoformat(), "--limit", "4"), ledger.select_runs(since=since, limit=4)),
        (("--since", since.isoformat()), ledger.select_runs(since=since)),  # ends at a page older
        (("--stage", "embedding", "--limit", "3"), ledger.select_runs(stage="embedding", limit=3)),
    ]:
        listed = loom("runs", "list", "--json", *args)
        assert listed.exit_code == 0, listed.output
        assert [r["id"] for r in json.loads(listed.stdout)] == [run.id for run in wanted]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("runs", "list", "--status", "weird"), "--status must be one of"),
        (("runs", "list", "--since", "yesterday"), "--since"),
        (("runs", "show", "999999"), "no stage run 999999"),
        (
            (
                "runs",
                "retry",
            ),
            "give either a run id",
        ),
    ],
)
def test_operator_mistakes_are_one_line_and_a_non_zero_exit(args, message):
    result = loom(*args)
    assert result.exit_code == 2 and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_any_op_runs_from_the_cli_and_bad_input_is_one_line():
    enable_logging("opcli")
    append("opcli", "t", "a turn for the op command")
    listed = loom("op", "conversation.list", '{"namespace": "opcli", "thread_id": "t"}')
    assert listed.exit_code == 0, listed.output
    assert [m["content"] for m in json.loads(listed.stdout)["messages"]] == ["a turn for the op command"]
    deleted = loom(
        "op", "conversation.delete", '{"namespace": "opcli", "thread_id": "t", "confirm_thread_id": "t"}'
    )
    assert deleted.exit_code == 0 and json.loads(deleted.stdout)["thread_deleted"] is True
    for args, says in (
        (("op", "conversation.list", "{not json"), "JSON"),
        (("op", "conversation.nope"), "unknown op"),
        (("op", "conversation.list", '{"namespace": "opcli"}'), "thread_id"),
    ):
        result = loom(*args)
        assert result.exit_code == 2 and result.stdout == "", (args, result.output)
        assert result.stderr.strip().count("\n") == 0 and says in result.stderr, (args, result.stderr)


def test_loom_op_writes_an_op_that_streams_its_answer_as_it_comes():
    enable_logging("opstream")
    append("opstream", "t", "dana's turn for her export", user_id="dana")
    exported = loom("op", "erasure.export", '{"namespace": "opstream", "user_id": "dana"}')
    assert exported.exit_code == 0, exported.output
    assert "dana's turn for her export" in json.dumps(json.loads(exported.stdout))


def test_ingest_hands_the_file_over_at_once_and_wait_needs_a_worker(tmp_path):
    from tests.support.waits import wait_until
    from workers import broker

    path = tmp_path / "session.md"
    path.write_text(TRANSCRIPT)
    enable_logging("handover")
    wait_until(lambda: broker.workers_seen() == 0, what="no worker to be running")
    refused = loom("ingest-transcript", "--namespace", "handover", "--file", str(path), "--wait")
    assert refused.exit_code == 2 and "no worker is running" in refused.stderr
    queued = loom("ingest-transcript", "--namespace", "handover", "--file", str(path))
    assert queued.exit_code == 0 and "3 turns handed over, run" in queued.stdout
    assert turns("handover") == 0  # no worker yet: the run waits in the ledger
    with db.session() as s:  # leave the ledger settled for the next test's worker
        s.exec(text("UPDATE stage_runs SET status = 'skipped' WHERE stage = 'ingest' AND status = 'pending'"))
