"""The cursor codec without a database (its keys given): typed positions round-trip exactly at the
edges of their ranges, a bug of an op is refused at encode, and at decode only the right key, op
and scope open a cursor, and even a validly signed position outside its type's range is a 422."""

import time
from datetime import UTC, datetime, timedelta, timezone
from uuid import UUID, uuid4

import pytest

from ops import cursors
from ops.errors import OpError

TURN = cursors.Kind("conversation.list", (datetime, int))
SESSION = cursors.Kind("looms.sessions", (datetime, UUID))
SCOPE = ("ns", "thread", None, "asc", None)


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    """Key 7 signs, key 6 (the one before it) is still accepted."""
    ring = cursors._Ring({7: b"k" * 32, 6: b"j" * 32}, 7, time.monotonic())
    monkeypatch.setattr(cursors, "_ring", lambda wanted=None: ring)
    return ring


def refused(kind, scope, cursor) -> bool:
    with pytest.raises(OpError) as error:
        cursors.decode(kind, scope, cursor)
    return error.value.status == 422 and error.value.field == "cursor"


EDGES = [
    (datetime.min.replace(tzinfo=UTC), -(2**63)),
    (datetime.max.replace(tzinfo=UTC), 2**63 - 1),
    (datetime(1970, 1, 1, tzinfo=UTC), 0),
    (datetime(2024, 2, 29, 23, 59, 59, 999_999, tzinfo=timezone(timedelta(hours=-7))), 1),
]


@pytest.mark.parametrize("position", EDGES)
def test_a_position_round_trips_exactly_to_the_microsecond_and_the_bigint(position):
    cursor = cursors.encode(TURN, SCOPE, position)
    assert len(cursor) == TURN.length <= 200
    ts, turn_id = cursors.decode(TURN, SCOPE, cursor)
    assert (ts, turn_id) == position and ts.tzinfo == UTC


def test_a_session_position_round_trips_with_its_uuid():
    position = (datetime(2025, 5, 1, 12, tzinfo=UTC), uuid4())
    cursor = cursors.encode(SESSION, ("ns", uuid4(), None, True), position)
    assert len(cursor) == SESSION.length <= 200
    assert refused(SESSION, ("ns", uuid4(), None, True), cursor)  # another loom


@pytest.mark.parametrize(
    "position",
    [
        (datetime(2025, 1, 1), 1),  # naive
        (datetime(2025, 1, 1, tzinfo=UTC), 2**63),  # past BIGINT
        (datetime(2025, 1, 1, tzinfo=UTC), True),
        (datetime(2025, 1, 1, tzinfo=UTC), "1"),
        (datetime(2025, 1, 1, tzinfo=UTC),),
    ],
)
def test_an_op_cannot_encode_a_position_outside_its_kind(position):
    with pytest.raises((TypeError, ValueError, OverflowError)):
        cursors.encode(TURN, SCOPE, position)


def signed(key_id: int, secret: bytes, body: bytes, kind=TURN, scope=SCOPE, version=cursors.VERSION) -> str:
    """A cursor as the codec lays it out, signed with any key."""
    header = cursors._HEADER.pack(version, key_id)
    return cursors._text(header + body + cursors._mac(secret, kind, scope, header, body))


def test_only_the_op_and_scope_it_was_issued_for_and_an_accepted_key_open_a_cursor(keys):
    position = (datetime(2025, 1, 1, tzinfo=UTC), 42)
    cursor = cursors.encode(TURN, SCOPE, position)
    assert cursors.decode(TURN, SCOPE, cursor) == position
    assert refused(cursors.Kind("conversation.get", (datetime, int)), SCOPE, cursor)
    for other in [("ns", "thread", None, "desc", None), ("ns2", "thread", None, "asc", None),
                  ("ns", "thread", "None", "asc", None), ("ns", "thread", None, "asc", "")]:  # fmt: skip
        assert refused(TURN, other, cursor), other
    body = cursors._pack(TURN, position)
    assert cursors.decode(TURN, SCOPE, signed(6, keys.keys[6], body)) == position  # the previous key
    assert refused(TURN, SCOPE, signed(5, b"i" * 32, body))  # a retired key
    assert refused(TURN, SCOPE, signed(7, b"i" * 32, body))  # another secret under the key's id


def test_a_validly_signed_position_out_of_its_range_is_still_a_422(keys):
    body = cursors._BIGINT.pack(2**63 - 1) + cursors._BIGINT.pack(1)  # microseconds past year 9999
    assert refused(TURN, SCOPE, signed(7, keys.keys[7], body))


def test_another_version_of_the_format_is_a_422(keys):
    body = cursors._BIGINT.pack(0) + cursors._BIGINT.pack(1)
    assert refused(TURN, SCOPE, signed(7, keys.keys[7], body, version=cursors.VERSION + 1))
