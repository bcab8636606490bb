"""Cursors over HTTP: every paged listing (conversation.get and list, list_saved_messages,
looms.sessions) continues only from a cursor this server issued for that very listing. A forged,
tampered, garbled or unsigned cursor (one of the format issued before cursors were signed
included), or one issued for another op, thread, namespace, user or filter, is a 422 naming
``cursor``, never a 5xx; and paging walks a whole listing once, without gaps or repeats."""

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models.settings import get_settings
from ops.caller import OPERATOR
from ops.registry import call
from tests.support.calls import append, enable_logging

NS, OTHER = "cursors", "cursors-other"
ROOT = Path(__file__).resolve().parents[2]


def b64(raw: bytes | str) -> str:
    return base64.urlsafe_b64encode(raw.encode() if isinstance(raw, str) else raw).decode()


@pytest.fixture(scope="module", autouse=True)
def listings():
    """Two or more items in every listing below, so each issues a cursor at limit 1."""
    for namespace in (NS, OTHER):
        enable_logging(namespace)
        for i in range(4):
            append(namespace, "t", f"turn {i}", msg_id=f"t{i}")
    for i in range(3):
        append(NS, "u", f"turn {i} of u", msg_id=f"u{i}")
        append(NS, "t", f"another agent's turn {i}", msg_id=f"s{i}", agent="someone")
        append(NS, "t", f"a run's turn {i}", msg_id=f"r{i}", run_id="r")
    # Saved without waiting for an embedding (no worker here: the save answers "pending").
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOOM_SAVE_MESSAGE_WAIT_SECONDS", "0")
        get_settings.cache_clear()
        for namespace, user, thread, n in ((NS, "ana", "t", 3), (NS, "ana", "v", 2), (NS, "bea", "t", 2),
                                           (OTHER, "ana", "t", 3)):  # fmt: skip
            for i in range(n):
                body = {"namespace": namespace, "user_id": user, "conversation_id": thread,
                        "message_id": f"saved-{user}-{thread}-{i}", "role": "user",
                        "content": f"worth keeping {i}"}  # fmt: skip
                assert call("conversation.save_message", OPERATOR, body)["saved"]
    get_settings.cache_clear()
    for namespace in (NS, OTHER):
        for i, agent in enumerate(("coder", "coder", "coder", "helper")):
            append(namespace, f"chat{i}", "a turn", agent=agent, run_id=f"run{i}")
            call(
                "context.pack",
                OPERATOR,
                {"namespace": namespace, "thread_id": f"chat{i}", "run_id": f"run{i}", "agent": agent},
            )
            if i < 2:  # said after the session began: it awaits the night
                append(namespace, f"chat{i}", "another turn", agent=agent, run_id=f"run{i}")


@pytest.fixture(scope="module")
def token(make_token):
    return make_token(NS, OTHER, role="viewer")


MESSAGES = ("messages", "next_cursor", lambda m: (m["agent"], m["msg_id"]))
SAVED = ("messages", "next_cursor", lambda m: (m["conversation_id"], m["message_id"]))
SESSIONS = ("sessions", "nextCursor", lambda s: s["id"])

# Every listing: its op, its body (the cursor and limit added by the tests), how to read its page.
LISTINGS = {
    "get": ("conversation.get", {"thread_id": "t", "include_messages": True}, MESSAGES),
    "get desc": ("conversation.get", {"thread_id": "t", "include_messages": True, "order": "desc"}, MESSAGES),
    "get one agent": ("conversation.get", {"thread_id": "t", "include_messages": True, "agent": "someone"},
                      MESSAGES),
    "list": ("conversation.list", {"thread_id": "t"}, MESSAGES),
    "list another thread": ("conversation.list", {"thread_id": "u"}, MESSAGES),
    "list another namespace": ("conversation.list", {"namespace": OTHER, "thread_id": "t"}, MESSAGES),
    "list one agent": ("conversation.list", {"thread_id": "t", "agent": "someone"}, MESSAGES),
    "list one run": ("conversation.list", {"thread_id": "t", "run_id": "r"}, MESSAGES),
    "saved": ("conversation.list_saved_messages", {"user_id": "ana"}, SAVED),
    "saved of a conversation": ("conversation.list_saved_messages",
                                {"user_id": "ana", "conversation_id": "t"}, SAVED),
    "saved of another user": ("conversation.list_saved_messages", {"user_id": "bea"}, SAVED),
    "saved in another namespace": ("conversation.list_saved_messages", {"namespace": OTHER, "user_id": "ana"},
                                   SAVED),
    "sessions": ("looms.sessions", {}, SESSIONS),
    "sessions of an agent": ("looms.sessions", {"agent_name": "coder"}, SESSIONS),
    "sessions awaiting the night": ("looms.sessions", {"awaiting_night": True}, SESSIONS),
    "sessions in another namespace": ("looms.sessions", {"namespace": OTHER}, SESSIONS),
}  # fmt: skip
OPS = sorted({op for op, _, _ in LISTINGS.values()})


def page(client, token, listing: str, **extra):
    op, body, _ = LISTINGS[listing]
    return client.post(f"/v1/{op}", json={"namespace": NS, **body, **extra}, headers=token)


def refused(answer) -> bool:
    return answer.status_code == 422 and answer.json().get("field") == "cursor"


def issued(client, token, listing: str) -> str:
    answer = page(client, token, listing, limit=1)
    assert answer.status_code == 200, answer.text
    cursor = answer.json()[LISTINGS[listing][2][1]]
    assert cursor and len(cursor) <= 200
    return cursor


def walk(client, token, listing: str, limit: int) -> list:
    _, _, (items, next_key, identity) = LISTINGS[listing]
    seen, cursor = [], None
    while True:
        answer = page(client, token, listing, limit=limit, **({"cursor": cursor} if cursor else {}))
        assert answer.status_code == 200, answer.text
        seen += [identity(item) for item in answer.json()[items]]
        if not (cursor := answer.json()[next_key]):
            return seen


@pytest.mark.parametrize("listing", LISTINGS)
def test_paging_walks_a_whole_listing_once_in_its_order(client, token, listing):
    _, _, (items, next_key, identity) = LISTINGS[listing]
    whole = page(client, token, listing, limit=200).json()
    assert whole[next_key] is None and len(whole[items]) >= 2
    expected = [identity(item) for item in whole[items]]
    for limit in (1, 2, 3):
        assert walk(client, token, listing, limit) == expected, limit


FORGED = [  # each answered 500 before cursors were signed
    ("saved", ["2020-01-01T00:00:00+00:00", float("inf")]),  # OverflowError
    ("sessions", ["2020-01-01T00:00:00+00:00", 123]),  # AttributeError: UUID(123)
    ("sessions", ["2020-01-01T00:00:00+00:00", [1]]),
]


@pytest.mark.parametrize(("listing", "position"), FORGED, ids=[json.dumps(p) for _, p in FORGED])
def test_a_forged_position_is_a_422_naming_the_cursor_not_a_500(client, token, listing, position):
    assert refused(page(client, token, listing, cursor=b64(json.dumps(position))))


UNSIGNED = {  # cursors of the format issued before cursors were signed, each a real position
    "get": b64("c0.0"),  # (ts, id) of the epoch: the whole thread follows
    "list": b64("c0.0"),
    "saved": b64(json.dumps(["2999-01-01T00:00:00+00:00", 2**62])),
    "sessions": b64(json.dumps(["2999-01-01T00:00:00+00:00", "ffffffff-ffff-ffff-ffff-ffffffffffff"])),
}


@pytest.mark.parametrize("listing", UNSIGNED)
def test_an_unsigned_cursor_of_the_earlier_format_is_a_422(client, token, listing):
    assert refused(page(client, token, listing, cursor=UNSIGNED[listing]))


def tampered(cursor: str) -> list[str]:
    """The cursor with each character changed in turn, cut short, lengthened, padded."""
    changed = [cursor[:i] + ("B" if c == "A" else "A") + cursor[i + 1 :] for i, c in enumerate(cursor)]
    return [*changed, cursor[:-1], cursor[1:], cursor + "A", cursor + "=", cursor + "==", "A" + cursor]


@pytest.mark.parametrize("listing", ["get", "list", "saved", "sessions"])
def test_a_tampered_cursor_is_a_422(client, token, listing):
    cursor = issued(client, token, listing)
    assert page(client, token, listing, cursor=cursor).status_code == 200
    accepted = [c for c in tampered(cursor) if not refused(page(client, token, listing, cursor=c))]
    assert accepted == []


def test_a_cursor_pages_only_the_listing_that_issued_it(client, token):
    """Another op, thread, namespace, user, agent, run, order or filter: 422, each way round."""
    cursors = {listing: issued(client, token, listing) for listing in LISTINGS}
    accepted = [
        (issuer, listing)
        for issuer, cursor in cursors.items()
        for listing in LISTINGS
        if listing != issuer and not refused(page(client, token, listing, cursor=cursor))
    ]
    assert accepted == []
    for listing, cursor in cursors.items():
        assert page(client, token, listing, cursor=cursor).status_code == 200


def _json_cursor(values: list) -> str:
    return b64(json.dumps(values))


GARBAGE = st.one_of(
    st.text(min_size=1, max_size=200),
    st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=", min_size=1,
            max_size=200),
    st.binary(min_size=1, max_size=150).map(b64),
    st.lists(
        st.one_of(st.integers(), st.floats(), st.text(max_size=40), st.none(), st.booleans(),
                  st.datetimes().map(lambda d: d.isoformat()), st.uuids().map(str)),
        max_size=3,
    ).map(_json_cursor).filter(lambda c: len(c) <= 200),
    st.tuples(st.integers(min_value=-(2**70), max_value=2**70), st.integers(min_value=-(2**70),
              max_value=2**70)).map(lambda p: b64(f"c{p[0]}.{p[1]}")),
)  # fmt: skip


def test_no_cursor_it_did_not_issue_gets_past_any_listing(client, token):
    @given(cursor=GARBAGE)
    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    def exchange(cursor: str) -> None:
        for listing in ("get", "list", "saved", "sessions"):
            answer = page(client, token, listing, cursor=cursor)
            assert answer.status_code < 500, (listing, cursor, answer.text[:300])
            assert refused(answer), (listing, cursor, answer.status_code, answer.text[:300])

    exchange()


# --- the keys ------------------------------------------------------------------------------------


def rotate(client, make_token) -> dict:
    answer = client.post(
        "/v1/cursors.rotate_key", json={}, headers=make_token(role="admin", all_namespaces=True)
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


SIGNED = ["get", "list", "saved", "sessions"]


def test_a_rotation_keeps_the_cursors_issued_before_it_until_the_next_one(client, token, make_token):
    before = {listing: issued(client, token, listing) for listing in SIGNED}
    first = rotate(client, make_token)
    assert first["accepted_key_ids"][0] == first["key_id"] and len(first["accepted_key_ids"]) == 2
    after = {listing: issued(client, token, listing) for listing in SIGNED}
    for listing in SIGNED:
        assert after[listing] != before[listing]  # signed with the new key
        assert (
            page(client, token, listing, cursor=before[listing]).json()
            == page(client, token, listing, cursor=after[listing]).json()
        )
    second = rotate(client, make_token)
    assert second["accepted_key_ids"] == [second["key_id"], first["key_id"]] and second["retired"] >= 1
    for listing in SIGNED:
        assert refused(page(client, token, listing, cursor=before[listing])), listing
        assert page(client, token, listing, cursor=after[listing]).status_code == 200, listing


@pytest.mark.parametrize("listing", SIGNED)
def test_a_walk_with_a_rotation_between_every_two_pages_is_whole(client, token, make_token, listing):
    _, _, (items, next_key, identity) = LISTINGS[listing]
    expected = [identity(item) for item in page(client, token, listing, limit=200).json()[items]]
    seen, cursor = [], None
    while True:
        answer = page(client, token, listing, limit=1, **({"cursor": cursor} if cursor else {}))
        assert answer.status_code == 200, answer.text
        seen += [identity(item) for item in answer.json()[items]]
        if not (cursor := answer.json()[next_key]):
            break
        rotate(client, make_token)
    assert seen == expected


def test_a_cursor_signed_with_a_key_another_process_just_made_pages_here_at_once(client, token, database):
    """The other process rotates and issues the next page's cursor; this one, its keys read moments
    before, takes that cursor as its own."""
    from ops import cursors
    from ops.turns import LIST_CURSOR

    ours = issued(client, token, "list")
    scope = (NS, "t", None, "asc", None)
    ts, turn_id = cursors.decode(LIST_CURSOR, scope, ours)  # and so this process has its keys now
    script = (
        "import sys; from datetime import datetime; from ops import cursors; "
        "cursors.rotate_key(); "
        "kind = cursors.Kind('conversation.list', (datetime, int)); "
        f"print(cursors.encode(kind, {scope!r}, (datetime.fromisoformat({ts.isoformat()!r}), {turn_id})))"
    )
    env = {**os.environ, "LOOM_DATABASE_URL": database}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]
    theirs = done.stdout.strip()
    assert theirs != ours
    mine, other = (page(client, token, "list", cursor=c) for c in (ours, theirs))
    assert other.status_code == 200, other.text
    assert other.json() == mine.json()
