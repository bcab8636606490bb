"""One codec for the cursors of every paged listing: conversation.get and conversation.list,
conversation.list_saved_messages, looms.sessions.

A cursor carries the position a page ended at, typed by its listing's ``Kind`` (a turn's
``(datetime, int)``, a session's ``(datetime, UUID)``), and an HMAC-SHA256 over that position, the
listing's op and its scope: whatever the request chose its rows by (namespace, thread, user, loom,
filters, order), which the reader recomputes from its own request. So a cursor pages only the
listing that issued it; any other string (forged, tampered, garbled, another listing's, or one of
the unsigned formats issued before cursors were signed) is a 422 naming ``cursor``.

The text is URL-safe base64 without padding of, in bytes: the format's version (1), the signing
key's id (4), the position (8 a datetime, as exact microseconds since the epoch, or an int; 16 a
UUID), the HMAC (32): 71 characters for ``(datetime, int)``, 82 for ``(datetime, UUID)``.

The keys are rows of ``cursor_keys`` (``pipelines.cursor_keys``), so every API process shares them; each
process caches them for ``KEYS_CACHE_SECONDS``. The newest key signs; it and the one before it are
accepted. ``rotate_key`` (the operator op ``cursors.rotate_key``) adds a key and drops the older
ones. A cursor naming a key newer than this process knows reloads the keys at once, so one another
process signed with a key it just made pages here too.
"""

import base64
import hashlib
import hmac
import json
import re
import struct
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from uuid import UUID

from models import db
from models.base import stored
from ops.errors import invalid
from pipelines import cursor_keys

VERSION = 1
KEYS_CACHE_SECONDS = 60.0  # how long a process signs with a key after another process rotated
NOT_ISSUED = "cursor is not one this server issued"

EPOCH, MICROSECOND = datetime(1970, 1, 1, tzinfo=UTC), timedelta(microseconds=1)
_HEADER = struct.Struct(">BI")  # version, key id
_BIGINT = struct.Struct(">q")
_MAC_BYTES = hashlib.sha256().digest_size
PositionValue = datetime | int | UUID
_SIZES: dict[type[PositionValue], int] = {datetime: _BIGINT.size, int: _BIGINT.size, UUID: 16}
_TEXT = re.compile(r"[A-Za-z0-9_-]+")

ScopeValue = str | int | bool | UUID | None


@dataclass(frozen=True)
class Kind:
    """The cursors of one listing: the op that issues and reads them, the types of their position."""

    op: str
    position: tuple[type[PositionValue], ...]

    def __post_init__(self) -> None:
        if not self.position or any(t not in _SIZES for t in self.position):
            raise TypeError(f"a position is made of {', '.join(t.__name__ for t in _SIZES)}")

    @property
    def length(self) -> int:
        """Characters of its cursors."""
        size = _HEADER.size + sum(_SIZES[t] for t in self.position) + _MAC_BYTES
        return -(-size * 4 // 3)  # base64 without padding


def encode(kind: Kind, scope: tuple[ScopeValue, ...], position: tuple) -> str:
    """The cursor that continues ``kind``'s listing of ``scope`` after ``position``."""
    ring = _ring()
    header = _HEADER.pack(VERSION, ring.signing)
    body = _pack(kind, position)
    return _text(header + body + _mac(ring.keys[ring.signing], kind, scope, header, body))


def decode(kind: Kind, scope: tuple[ScopeValue, ...], cursor: str) -> tuple:
    """The position a cursor this server issued for ``kind``'s listing of ``scope`` carries; any
    other cursor is a 422 naming ``cursor``."""
    try:
        if len(cursor) != kind.length or not _TEXT.fullmatch(cursor):
            raise ValueError("not a cursor's shape")
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        if _text(raw) != cursor:  # the unused bits of the last character set
            raise ValueError("not a cursor's shape")
        version, key_id = _HEADER.unpack_from(raw)
        if version != VERSION:
            raise ValueError("another format")
        secret = _ring(key_id).keys.get(key_id)
        if secret is None:
            raise ValueError("an unknown key")
        header, body, mac = raw[: _HEADER.size], raw[_HEADER.size : -_MAC_BYTES], raw[-_MAC_BYTES:]
        if not hmac.compare_digest(mac, _mac(secret, kind, scope, header, body)):
            raise ValueError("a signature that does not match")
        return _unpack(kind, body)
    except (ValueError, OverflowError, struct.error) as exc:  # binascii.Error is a ValueError
        raise invalid(NOT_ISSUED, "cursor") from exc


def _text(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _mac(secret: bytes, kind: Kind, scope: tuple[ScopeValue, ...], header: bytes, body: bytes) -> bytes:
    bound = [kind.op, [t.__name__ for t in kind.position], [_scope_value(v) for v in scope]]
    signed = header + body + json.dumps(bound, separators=(",", ":")).encode()  # body's length is fixed
    return hmac.new(secret, signed, hashlib.sha256).digest()


def _scope_value(value: ScopeValue) -> str | int | bool | None:
    if isinstance(value, UUID):
        return str(value)
    if value is None or isinstance(value, str | int | bool):
        return value
    raise TypeError(f"a cursor's scope holds no {type(value).__name__}")


def _pack(kind: Kind, position: tuple) -> bytes:
    """The position as bytes; a value of another type (TypeError), a naive datetime or an int past
    BIGINT (ValueError) is a bug of the op, never the caller's."""
    if len(position) != len(kind.position):
        raise TypeError(f"{kind.op}'s position is {len(kind.position)} values")
    packed = []
    for typ, value in zip(kind.position, position, strict=True):
        if not isinstance(value, typ) or isinstance(value, bool):
            raise TypeError(f"{kind.op}'s position holds a {typ.__name__}, not {value!r}")
        if isinstance(value, datetime):
            if value.utcoffset() is None:
                raise ValueError(f"{kind.op}'s position holds an aware datetime, not {value!r}")
            packed.append(_BIGINT.pack((value - EPOCH) // MICROSECOND))  # exact, as a float is not
        elif isinstance(value, UUID):
            packed.append(value.bytes)
        elif -(2**63) <= value < 2**63:
            packed.append(_BIGINT.pack(value))
        else:
            raise ValueError(f"{kind.op}'s position holds a BIGINT, not {value}")
    return b"".join(packed)


def _unpack(kind: Kind, body: bytes) -> tuple:
    """Typed values: an aware UTC datetime within Python's years (OverflowError past them), an int
    within BIGINT, a UUID."""
    values, at = [], 0
    for typ in kind.position:
        chunk, at = body[at : at + _SIZES[typ]], at + _SIZES[typ]
        if typ is UUID:
            values.append(UUID(bytes=chunk))
        else:
            (number,) = _BIGINT.unpack(chunk)
            values.append(EPOCH + number * MICROSECOND if typ is datetime else number)
    return tuple(values)


# --- the keys ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Ring:
    keys: dict[int, bytes]  # the accepted keys by id
    signing: int  # the newest's id
    loaded: float  # time.monotonic() when read


_rings: dict[str, _Ring] = {}  # by database URL: a process (a test) may move to another
_loading = threading.Lock()


def _ring(wanted: int | None = None) -> _Ring:
    """The keys as this process knows them: read again once they are ``KEYS_CACHE_SECONDS`` old,
    or when a cursor names a key newer than the one it signs with (``wanted``: another process
    rotated). That costs a forged cursor one small read, as a real page costs its query."""
    url = db.url()

    def due(ring: _Ring | None) -> bool:
        if ring is None or time.monotonic() - ring.loaded >= KEYS_CACHE_SECONDS:
            return True
        return wanted is not None and wanted > ring.signing

    ring = _rings.get(url)
    if due(ring):
        with _loading:
            ring = _rings.get(url)
            if due(ring):
                ring = _rings[url] = _load()
    assert ring is not None
    return ring


def _load() -> _Ring:
    with db.session() as s:
        rows = cursor_keys.accepted(s)
    return _Ring({stored(row.id): row.secret for row in rows}, stored(rows[0].id), time.monotonic())


def rotate_key() -> cursor_keys.Rotation:
    """Make a new key to sign with from now on; the one that signed until now stays accepted, the
    ones before it are dropped (a cursor they signed is refused). This process signs with the new
    key at once, every other within ``KEYS_CACHE_SECONDS`` (and accepts its cursors at once)."""
    with db.session() as s:
        rotation = cursor_keys.rotate(s)
    _rings.pop(db.url(), None)
    return rotation
