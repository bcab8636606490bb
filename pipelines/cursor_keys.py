"""The keys paging cursors are signed with (``ops.cursors``), rows of ``cursor_keys``: the newest
signs, it and the one before it are accepted, a rotation adds a key and drops the older ones."""

import secrets
from dataclasses import dataclass

from sqlmodel import Session, col, delete, select

from models.base import stored, utcnow
from models.cursor_key import KEY_BYTES, CursorKey

KEPT_KEYS = 2  # the signing key and the one before it


def accepted(s: Session) -> list[CursorKey]:
    """The accepted keys, newest (the signing key) first; a database whose keys were deleted by hand
    is given a new one to sign with from now on."""
    rows = _newest(s)
    if not rows:
        _add(s)
        rows = _newest(s)
    return rows


def _newest(s: Session) -> list[CursorKey]:
    return list(s.exec(select(CursorKey).order_by(col(CursorKey.id).desc()).limit(KEPT_KEYS)))


def _add(s: Session) -> CursorKey:
    key = CursorKey(secret=secrets.token_bytes(KEY_BYTES), created_at=utcnow())
    s.add(key)
    s.flush()
    return key


@dataclass(frozen=True)
class Rotation:
    key_id: int
    accepted_key_ids: list[int]
    retired: int


def rotate(s: Session) -> Rotation:
    """Add a key to sign with from now on; keep the one that signed until now, drop the ones before
    it (a cursor they signed is refused)."""
    s.exec(select(col(CursorKey.id)).with_for_update()).all()  # one rotation at a time
    key = _add(s)
    kept = [stored(row.id) for row in _newest(s)]
    retired = s.exec(delete(CursorKey).where(col(CursorKey.id).not_in(kept))).rowcount
    return Rotation(stored(key.id), kept, retired)
