"""A turn's words stay in its row (migration 0033): BM25 reads every candidate's tsvector, and one
kept in the TOAST table cost a lookup and a decompression a candidate."""

import uuid
from datetime import UTC, datetime

from sqlalchemy import text

from models import db, partitions
from tests.support.calls import append, enable_logging

# Some 200 distinct words: a tsvector of some 4 kB, which storage EXTENDED moves out of a row over
# 2 kB.
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


def test_every_month_keeps_the_words_in_the_row_and_the_text_out():
    with db.autocommit() as conn:
        partitions.ensure(conn, datetime(2019, 4, 1, tzinfo=UTC))  # a month made now
    with db.session() as s:
        storage = s.execute(
            text(
                "SELECT c.relname, a.attname, a.attstorage FROM pg_inherits i "
                "JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_attribute a ON a.attrelid = c.oid "
                "WHERE i.inhparent = 'turns'::regclass "
                "AND a.attname IN ('lexemes', 'context_lexemes', 'content')"
            )
        ).all()
    assert "turns_p2019_04" in {name for name, _, _ in storage}
    assert {(column, kind) for _, column, kind in storage} == {
        ("lexemes", "m"),
        ("context_lexemes", "m"),
        ("content", "x"),
    }
