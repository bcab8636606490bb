"""`loom` commands run as processes while Loom is not running: a command that needs the workers or
the broker refuses in one line (exit 75) and starts nothing; one that reads only the database may
start the embedded PostgreSQL for its own time, never Redis; configured servers that do not answer
are a one-line refusal too. Where there is no data directory at all (a shell without the server's
LOOM_HOME), no command but `loom up`, `loom db upgrade` and `loom restore` makes one: each says where
it looked, in one line, exit 2."""

import json
import os
import subprocess
import sys

import pytest

from services.ports import free_port, is_listening, port_for

pytestmark = pytest.mark.e2e

NOT_RUNNING = "error: Loom is not running (start it with loom up, or set LOOM_DATABASE_URL/LOOM_REDIS_URL)"


def loom(home, *args: str, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("LOOM_")}
    environ.update(LOOM_HOME=str(home), **env)
    return subprocess.run(
        [sys.executable, "-m", "cli", *args], env=environ, capture_output=True, text=True, timeout=60
    )


def nothing_started(home) -> bool:
    return not is_listening(port_for(home, "postgres")) and not (home / "redis").exists()


def made(home) -> None:
    """A data directory as `loom db upgrade` makes it (its servers stopped again)."""
    done = loom(home, "db", "upgrade")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("tokens", "create", "--namespace", "ns", "--role", "writer"),
        ("runs", "list"),
        ("namespaces", "logging", "ns", "--on"),
        ("search", "ns", "q"),
        ("ingest-transcript", "--namespace", "ns", "--file", "TMP/t.md"),
        ("worker",),
        ("backup", "TMP/loom.dump"),
        ("status",),
    ],
    ids=lambda args: " ".join(args[:2]),
)
def test_no_command_but_loom_up_makes_a_data_directory(scratch, args):
    home = scratch / "nowhere"
    (scratch / "t.md").write_text("# user\nhello\n")
    args = [a.replace("TMP", str(scratch)) for a in args]
    done = loom(home, *args)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and done.stdout == "", done.stderr
    assert done.stderr.startswith(f"error: no Loom data directory at {home} (LOOM_HOME)"), done.stderr
    assert "LOOM_HOME of the running `loom up`" in done.stderr
    assert not home.exists()


def test_a_token_minted_while_loom_is_not_running_says_so(home):
    made(home)
    done = loom(home, "tokens", "create", "--namespace", "ns", "--role", "writer")
    assert done.returncode == 0 and done.stdout.startswith("loom_"), done.stderr
    assert f"Loom is not running from {home}" in done.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("ingest-transcript", "--namespace", "ns", "--file", "TRANSCRIPT"),
        ("runs", "retry", "1"),
        ("worker",),
        ("scheduler",),
        ("api",),
    ],
    ids=lambda args: " ".join(args[:2]),
)
def test_a_command_that_needs_the_running_system_refuses_in_one_line_and_starts_nothing(home, scratch, args):
    made(home)
    transcript = scratch / "t.md"
    transcript.write_text("# user\nhello\n")
    args = [str(transcript) if a == "TRANSCRIPT" else a for a in args]
    done = loom(home, *args)
    assert done.returncode == 75, done.stderr
    assert done.stderr == NOT_RUNNING + "\n" and done.stdout == ""
    assert nothing_started(home)


def test_a_command_that_reads_only_the_database_starts_postgresql_alone_and_stops_it_again(home):
    made(home)
    done = loom(home, "runs", "list", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
    assert not is_listening(port_for(home, "postgres"))
    assert not (home / "redis").exists()  # Redis was never started


def test_configured_servers_that_do_not_answer_are_a_one_line_refusal_that_hides_the_password(home):
    dead = free_port()
    database = f"postgresql+psycopg://loom:s3cr3t-pw@127.0.0.1:{dead}/loom"
    for args in (("runs", "list"), ("tokens", "create", "--namespace", "a"), ("search", "a", "q")):
        done = loom(home, *args, LOOM_DATABASE_URL=database)
        assert done.returncode == 75, done.stderr
        assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr
        assert f"127.0.0.1:{dead}" in done.stderr and "s3cr3t-pw" not in done.stderr
    done = loom(
        home, "runs", "retry", "1", LOOM_DATABASE_URL=database, LOOM_REDIS_URL=f"redis://127.0.0.1:{dead}/0"
    )
    assert done.returncode == 75 and done.stderr.count("\n") == 1, done.stderr
    assert nothing_started(home)


def test_loom_up_whose_redis_port_another_process_holds_refuses_in_one_line_and_stops_postgresql(home):
    import socket
    import threading

    squatter = socket.socket()
    squatter.bind(("127.0.0.1", port_for(home, "redis")))
    squatter.listen()

    def serve() -> None:  # answers no Redis command
        while True:
            try:
                squatter.accept()[0].close()
            except OSError:
                return

    threading.Thread(target=serve, daemon=True).start()
    (home / "redis").mkdir(parents=True)
    (home / "redis" / "redis.pid").write_text(f"{os.getpid()}\n")  # a stale pid file, reused pid
    try:
        done = loom(home, "up")
    finally:
        squatter.shutdown(socket.SHUT_RDWR)
        squatter.close()
    assert done.returncode == 75
    *_, last = done.stderr.splitlines()  # (before it, loom up's log lines)
    assert last.startswith("error: the embedded Redis did not start: port "), done.stderr
    assert "Traceback" not in done.stderr
    assert not is_listening(port_for(home, "postgres"))


@pytest.mark.parametrize(
    ("variable", "value"),
    [("LOOM_EMBED_BATCH_SIZE", "0"), ("LOOM_PORT", "seventy"), ("LOOM_LOG_LEVEL", "loud")],
)
@pytest.mark.parametrize("args", [("up",), ("status",), ("search", "ns", "q"), ("worker",)], ids=" ".join)
def test_a_setting_out_of_its_bounds_is_one_line_naming_it_before_anything_runs(
    scratch, args, variable, value
):
    home = scratch / "home"
    done = loom(home, *args, **{variable: value})
    assert done.returncode == 2 and done.stdout == "", done.stderr
    said = done.stderr.splitlines()
    assert (
        len(said) == 1 and said[0].startswith(f"error: {variable}: ") and repr(value)[1:-1] in said[0].lower()
    )
    assert not home.exists()
