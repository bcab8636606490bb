"""Bounded tokens' brief keys with escaped ids (``pipelines.briefs.bounds_prefix``)

The prefixes were ``~<user>~`` and ``~<user or _>~<session>~`` with the ids as they are, and a
listing took every key starting with its prefix: a token pinned to user ``a`` listed the briefs of
user ``a~x``, and one pinned to ``_`` those of a session token pinned to no user. The ids are now
escaped ("%" as "%25", "~" as "%7E"), a session pinned to no user has an empty user, and the key
column is widened for the escaped ids (256 characters each, at most three times as long escaped).

A stored key is read in its old form by its count of "~": two, a user's (``~u~k``); three, a
session's (``~u~s~k``, ``_`` read as no user); more, whose ids held a "~" and cannot be told apart,
a user's whose id is everything between the first "~" and the last. Each is rewritten in the new
form. ``downgrade`` widens nothing back and keeps the keys: the old form could not tell them apart.

Revision ID: 0037
"""

import sqlalchemy as sa
from alembic import op

revision = "0037"
down_revision = "0036"
branch_labels = None
depends_on = None


def _escaped(identifier: str) -> str:
    # As pipelines.briefs does today; a migration keeps the rule it was written with.
    return identifier.replace("%", "%25").replace("~", "%7E")


def new_form(stored: str) -> str:
    bounds, key = stored[1:].rsplit("~", 1)
    parts = bounds.split("~")
    if len(parts) == 2:
        user, session = parts
        ids = ["" if user == "_" else user, session]
    else:
        ids = [bounds]
    return "~" + "".join(_escaped(identifier) + "~" for identifier in ids) + key


def upgrade() -> None:
    op.execute("ALTER TABLE session_briefs ALTER COLUMN brief_key TYPE varchar(2048)")
    conn = op.get_bind()
    rows = conn.execute(sa.text("SELECT id, brief_key FROM session_briefs WHERE brief_key LIKE '~%'")).all()
    moved = [{"id": row.id, "key": new_form(row.brief_key)} for row in rows]
    moved = [m for m, row in zip(moved, rows, strict=True) if m["key"] != row.brief_key]
    if moved:
        # Out of the way first ("#" starts no key), so that no row takes a key another still holds.
        conn.execute(
            sa.text("UPDATE session_briefs SET brief_key = '#' || id WHERE id = ANY(:ids)"),
            {"ids": [m["id"] for m in moved]},
        )
        conn.execute(sa.text("UPDATE session_briefs SET brief_key = :key WHERE id = :id"), moved)


def downgrade() -> None:
    pass
