"""A listing shows nothing that reads as high: conversation.threads screens each thread's title,
its last turn's excerpt, and its metadata, whatever was stored."""

import pytest

from ops.caller import OPERATOR
from ops.registry import call
from tests.support.calls import append, enable_logging

SECRETS = {
    "stripe": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "nested": {"deploy": {"token": "ghp_" + "R2d2C3poR2d2C3poR2d2C3poR2d2C3poR2d2"}},
    "password": "Tr0ub4dor&3",
    "keys": ["AKIA" + "IOSFODNN7EXAMPLQ", "an ordinary note"],
    "card": 4111111111111111,
    "sk_live_" + "51HqLyjWDarjtT1zdp7dc4eC3": "a secret as a key",
}


@pytest.fixture(scope="module", autouse=True)
def recording():
    enable_logging("listing")


def listed(thread_id: str) -> dict:
    threads = call("conversation.threads", OPERATOR, {"namespace": "listing", "agent": "*"})["threads"]
    (thread,) = [t for t in threads if t["thread_id"] == thread_id]
    return thread


def test_threads_blank_metadata_values_that_read_as_high_and_keep_the_rest():
    call(
        "conversation.create",
        OPERATOR,
        {"namespace": "listing", "thread_id": "meta", "metadata": {**SECRETS, "ticket": "BILL-12", "n": 3}},
    )
    shown = listed("meta")["metadata"]
    assert shown["stripe"] == "" and shown["nested"]["deploy"]["token"] == "" and shown["password"] == ""
    assert shown["keys"] == ["", "an ordinary note"] and shown["card"] == ""
    assert not [key for key in shown if key.startswith("sk_live_")]  # a key that reads as high is dropped
    assert (shown["ticket"], shown["n"]) == ("BILL-12", 3)
    got = call("conversation.get", OPERATOR, {"namespace": "listing", "thread_id": "meta"})
    assert got["metadata"]["stripe"] == SECRETS["stripe"]  # stored as written; get reads it whole


def test_threads_blank_a_title_and_an_excerpt_that_read_as_high():
    key = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
    call(
        "conversation.create",
        OPERATOR,
        {"namespace": "listing", "thread_id": "titled", "title": f"key {key}"},
    )
    append("listing", "titled", f"here is the key: {key}")
    thread = listed("titled")
    assert thread["title"] is None and thread["last_turn"]["excerpt"] == ""


def test_ordinary_metadata_is_listed_as_stored():
    metadata = {"ticket": "BILL-12", "labels": ["billing", "q3"], "owner": {"team": "ledger", "size": 4}}
    call(
        "conversation.create", OPERATOR, {"namespace": "listing", "thread_id": "plain", "metadata": metadata}
    )
    assert listed("plain")["metadata"] == metadata
