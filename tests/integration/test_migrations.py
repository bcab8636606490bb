"""Migrations that rewrite stored rows, each run on a database left at the revision before it with
rows as the earlier build wrote them."""

import hashlib

import psycopg
import pytest

from models import migrate
from services import postgres

NAME = "t_migration_before"


@pytest.fixture()
def database_at(endpoints, admin_url):
    """A fresh database migrated up to a revision; its URL (plain, for psycopg) once there."""
    admin = admin_url
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{NAME}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{NAME}" OWNER "{postgres.ROLE}"')
    postgres.make_ready(admin.rsplit("/", 1)[0] + f"/{NAME}")
    url = endpoints.database_url.rsplit("/", 1)[0] + f"/{NAME}"

    def at(revision: str) -> str:
        migrate.upgrade(url, revision)
        return url

    yield at
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{NAME}" WITH (FORCE)')


def test_an_earlier_runs_last_error_becomes_its_one_known_attempt(database_at):
    url = database_at("0035")
    plain = url.replace("+psycopg", "")
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO stage_runs (stage, subject, idem_key, status, attempts, last_error, params, "
            "created_at, updated_at, available_at) VALUES "
            "('embedding', 'turn:1', 'k1', 'failed', 3, 'TimeoutError: slow', '{}', now(), "
            "'2026-11-30 10:00:00+00', now()), "
            "('embedding', 'turn:2', 'k2', 'succeeded', 1, NULL, '{}', now(), now(), now())"
        )
    migrate.upgrade(url)
    with psycopg.connect(plain) as conn:
        rows = dict(conn.execute("SELECT idem_key, history FROM stage_runs").fetchall())
    assert rows["k2"] == []
    [attempt] = rows["k1"]
    assert (attempt["attempt"], attempt["error"]) == (3, "TimeoutError: slow")
    assert attempt["at"].startswith("2026-11-30")


def test_bounded_briefs_keys_move_to_escaped_prefixes(database_at):
    url = database_at("0036")
    plain = url.replace("+psycopg", "")
    before_after = {
        "plan": "plan",  # a namespace-wide token's key stays
        "~ana~plan": "~ana~plan",
        "~50%~plan": "~50%25~plan",
        "~_~s-7~plan": "~~s-7~plan",  # a session pinned to no user
        "~ana~s-7~plan": "~ana~s-7~plan",
        "~a~x~y~plan": "~a%7Ex%7Ey~plan",  # ids that held a "~": one user's
        "~a%7Ex%7Ey~plan": "~a%257Ex%257Ey~plan",  # and the key that one takes, moved first
    }
    with psycopg.connect(plain, autocommit=True) as conn:
        for key in before_after:
            conn.execute(
                "INSERT INTO session_briefs (namespace, brief_key, revision, sections, written_by, "
                "created_at, updated_at) VALUES ('ns', %s, 1, '{}', 'token 1', now(), now())",
                (key,),
            )
    migrate.upgrade(url)
    with psycopg.connect(plain) as conn:
        keys = sorted(key for (key,) in conn.execute("SELECT brief_key FROM session_briefs"))
    assert keys == sorted(before_after.values())


TURN_COLUMNS = "(namespace, thread_id, agent, msg_id, role, content, metadata, sensitivity, ts)"


def test_migration_0005_carries_rows_and_their_runs_over(database_at):
    """A database at revision 0004 with a turn, its embedding row and run, and a run whose turn is
    gone: upgraded, the turn and row are intact and the runs are keyed by the embedding row."""
    url = database_at("0004")
    plain = url.replace("+psycopg", "")
    with psycopg.connect(plain, autocommit=True) as conn:
        turn_id = conn.execute(
            f"INSERT INTO turns {TURN_COLUMNS} "
            "VALUES ('old', 't', 'default', 'm1', 'user', 'kept words', '{}', 'none', now()) RETURNING id"
        ).fetchone()[0]
        row_id = conn.execute(
            "INSERT INTO embeddings (turn_id, namespace, thread_id, agent, msg_id, role, text, digest, "
            "created_at) "
            "VALUES (%s, 'old', 't', 'default', 'm1', 'user', 'kept words', 'abcdef0123456789ff', now()) "
            "RETURNING id",
            [turn_id],
        ).fetchone()[0]
        for subject, key in (
            (f"turn:{turn_id}", f"embed:{turn_id}:abcdef0123456789"),
            ("turn:999999", "embed:x"),
        ):
            conn.execute(
                "INSERT INTO stage_runs (stage, subject, idem_key, status, attempts, created_at, updated_at, "
                "available_at) VALUES ('embedding', %s, %s, 'succeeded', 1, now(), now(), now())",
                [subject, key],
            )
    migrate.upgrade(url)
    with psycopg.connect(plain, autocommit=True) as conn:
        assert conn.execute("SELECT content FROM turns WHERE id = %s", [turn_id]).fetchone() == (
            "kept words",
        )
        runs = conn.execute("SELECT subject, idem_key FROM stage_runs ORDER BY id").fetchall()
        assert runs == [
            (f"embedding:{row_id}", f"embedding:{row_id}:abcdef0123456789"),
            ("embedding:0", "embed:x"),
        ]
        # The same message from a second agent is now a copy of its own.
        conn.execute(
            f"INSERT INTO turns {TURN_COLUMNS} "
            "VALUES ('old', 't', 'other', 'm1', 'user', 'kept words', '{}', 'none', now())"
        )
        assert conn.execute("SELECT count(*) FROM turns").fetchone() == (2,)


def test_vectors_moved_out_of_line_come_back_into_the_row(database_at):
    """An embedding row past the TOAST threshold kept its text and sent its vector out of line
    (pgvector's ``external`` storage), so an exact scan fetched it from the TOAST table: 0039 writes
    those vectors back into the row, and a later row keeps its vector there."""
    url = database_at("0038")
    plain = url.replace("+psycopg", "")
    insert = (
        "INSERT INTO embeddings (turn_id, namespace, thread_id, agent, msg_id, role, text, digest, model, "
        "vector, created_at) VALUES (%s, 'ns', 't', 'a', %s, 'user', %s, 'd', 'm', %s::vector, now())"
    )
    with psycopg.connect(plain, autocommit=True) as conn:
        [dims] = conn.execute(
            "SELECT atttypmod FROM pg_attribute "
            "WHERE attrelid = 'embeddings'::regclass AND attname = 'vector'"
        ).fetchone()
        vector = "[" + ",".join(f"{(i * 7 % 13) / 13:.4f}" for i in range(dims)) + "]"
        # Text that does not compress (a digest chain), long enough to pass the threshold beside the vector.
        text = "".join(hashlib.sha256(str(n).encode()).hexdigest() for n in range(16))
        conn.execute(insert, (1, "m1", text, vector))
        toasted = "SELECT msg_id FROM embeddings WHERE pg_column_toast_chunk_id(vector) IS NOT NULL"
        assert conn.execute(toasted).fetchall() == [("m1",)]  # the case this migration is for
        migrate.upgrade(url)
        conn.execute(insert, (2, "m2", text, vector))
        assert conn.execute(toasted).fetchall() == []
        stored = conn.execute("SELECT vector::text FROM embeddings ORDER BY turn_id").fetchall()
    wanted = [float(x) for x in vector.strip("[]").split(",")]
    for (value,) in stored:  # the values themselves unchanged by the rewrite
        assert [float(x) for x in value.strip("[]").split(",")] == pytest.approx(wanted, abs=1e-6)
