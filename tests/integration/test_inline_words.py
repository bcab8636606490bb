"""A turn's words stay in its row (migration 0033): BM25 reads every candidate's tsvector, and one
kept in the TOAST table cost a lookup and a decompression a candidate."""

import uuid
from datetime import UTC, datetime

from sqlalchemy import text

from models import db, partitions
from tests.integration.conftest import append, enable_logging

# Some 200 distinct words: a tsvector of some 4 kB, which the default target (2 kB) moves out of the
# row, within a page.
LONG = " ".join(f"word{n}x{uuid.uuid4().hex[:6]}" for n in range(200))


def test_a_long_turns_words_are_kept_in_its_row():
    ns = f"inline-{uuid.uuid4().hex[:8]}"
    enable_logging(ns)
    append(ns, "t", LONG, role="assistant", msg_id="long")
    with db.session() as s:
        size, chunk = s.execute(
            text(
                "SELECT pg_column_size(lexemes), pg_column_toast_chunk_id(lexemes) FROM turns "
                "WHERE namespace = :ns AND msg_id = 'long'"
            ),
            {"ns": ns},
        ).one()
    assert 2500 < size < 8000, size  # large enough that it would have been moved out
    assert chunk is None  # not in the TOAST table


def test_every_month_of_turns_keeps_rows_of_up_to_a_page_whole():
    with db.autocommit() as conn:
        partitions.ensure(conn, datetime(2019, 4, 1, tzinfo=UTC))  # a month made now
    with db.session() as s:
        options = s.execute(
            text(
                "SELECT c.relname, c.reloptions FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
                "WHERE i.inhparent = 'turns'::regclass"
            )
        ).all()
        storage = dict(
            s.execute(
                text(
                    "SELECT attname, attstorage FROM pg_attribute WHERE attrelid = 'turns'::regclass "
                    "AND attname IN ('lexemes', 'context_lexemes')"
                )
            ).all()
        )
    assert "turns_p2019_04" in {name for name, _ in options}
    assert all("toast_tuple_target=8160" in (o or []) for _, o in options), options
    assert storage == {"lexemes": "m", "context_lexemes": "m"}
