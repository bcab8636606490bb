"""A hybrid search lifts what the query's words point to beyond its words: the turns said on the
days its time words name (read against the request's ``now``, or the time it is asked), the turns
of the role whose words it asks about, the turns of the one speaker it names. Each case pairs a
text said twice, so that nothing but the hint can tell the two apart: without it, the newer wins."""

from datetime import UTC, datetime, timedelta

import pytest

from ops.caller import Caller
from ops.registry import call
from tests.support.calls import append, enable_logging
from tests.support.waits import worked_off

NS = "hints"
ASKED = datetime(2026, 6, 10, 12, tzinfo=UTC)  # the moment the dated questions are asked from
CABIN = "We booked the cabin by the lake for the family reunion."
SINK = "The plumber replaced the washer under the kitchen sink."
SHOES = "Trail runners with a wide toe box suit long rocky hikes."
BIKE = "A steel frame touring bike with fenders for the commute."
POTTERY = "Signed up for the wheel-throwing pottery class on Thursday evenings."


@pytest.fixture(scope="module")
def corpus(broker, database):
    enable_logging(NS)
    now = datetime.now(UTC)
    said = [
        # (thread, msg_id, text, role, when, name)
        ("cabin-1", "cabin-two-weeks", CABIN, "user", ASKED - timedelta(days=14), None),
        ("cabin-2", "cabin-two-days", CABIN, "user", ASKED - timedelta(days=2), None),
        ("sink-1", "sink-two-weeks", SINK, "user", now - timedelta(days=14), None),
        ("sink-2", "sink-three-days", SINK, "user", now - timedelta(days=3), None),
        ("shoes-1", "shoes-assistant", SHOES, "assistant", ASKED - timedelta(days=40), None),
        ("shoes-2", "shoes-user", SHOES, "user", ASKED - timedelta(days=30), None),
        ("bike-1", "bike-user", BIKE, "user", ASKED - timedelta(days=40), None),
        ("bike-2", "bike-assistant", BIKE, "assistant", ASKED - timedelta(days=30), None),
        ("chat", "pottery-melanie", POTTERY, "user", ASKED - timedelta(days=50), "Melanie"),
        ("chat", "pottery-caroline", POTTERY, "assistant", ASKED - timedelta(days=49), "Caroline"),
    ]
    for thread, msg_id, text, role, when, name in said:
        append(
            NS,
            thread,
            text,
            role=role,
            msg_id=msg_id,
            ts=when.isoformat(),
            **({"name": name} if name else {}),
        )
    worked_off(broker)


ME = Caller(role="viewer", namespaces=(NS,))


def first_of(query: str, wanted: set[str], **body) -> str:
    """The first of the ``wanted`` messages a default (hybrid) search answers."""
    hits = call("conversation.search", ME, {"namespace": NS, "query": query, "limit": 20, **body})["hits"]
    return next(hit["msg_id"] for hit in hits if hit["msg_id"] in wanted)


CABINS = {"cabin-two-weeks", "cabin-two-days"}


def test_the_turn_said_when_the_query_says_comes_first(corpus):
    asked = {"now": ASKED.isoformat()}
    assert first_of("Which cabin did we book for the reunion?", CABINS, **asked) == "cabin-two-days"
    assert (
        first_of("Which cabin did we book for the reunion two weeks ago?", CABINS, **asked)
        == "cabin-two-weeks"
    )
    assert first_of("The cabin we booked for the reunion, on June 8?", CABINS, **asked) == "cabin-two-days"


def test_time_words_are_read_against_the_moment_asked_from(corpus):
    query = "Which cabin did we book three weeks ago?"
    # From ASKED, three weeks back holds neither booking: the newer comes first, as without the words.
    assert first_of(query, CABINS, now=ASKED.isoformat()) == "cabin-two-days"
    # A week later, three weeks back is the older booking's day.
    assert first_of(query, CABINS, now=(ASKED + timedelta(days=7)).isoformat()) == "cabin-two-weeks"


def test_without_a_moment_the_query_is_read_as_asked_now(corpus):
    sinks = {"sink-two-weeks", "sink-three-days"}
    assert first_of("What did the plumber replace under the sink?", sinks) == "sink-three-days"
    assert first_of("What did the plumber replace under the sink two weeks ago?", sinks) == "sink-two-weeks"


def test_a_question_about_what_the_assistant_said_lifts_its_turns_and_one_in_the_first_person_the_users(
    corpus,
):
    shoes, bikes = {"shoes-assistant", "shoes-user"}, {"bike-user", "bike-assistant"}
    assert first_of("Which trail runners suit rocky hikes?", shoes) == "shoes-user"  # the newer
    assert first_of("Which trail runners did you recommend for rocky hikes?", shoes) == "shoes-assistant"
    assert first_of("Which touring bike for the commute?", bikes) == "bike-assistant"
    assert first_of("Which touring bike did I want for my commute?", bikes) == "bike-user"


def test_the_one_speaker_a_question_names_has_their_turns_lifted(corpus):
    pottery = {"pottery-melanie", "pottery-caroline"}
    assert first_of("Who signed up for the pottery class?", pottery) == "pottery-caroline"
    assert first_of("Which pottery class did Melanie sign up for?", pottery) == "pottery-melanie"
    assert first_of("Which pottery class did Caroline sign up for?", pottery) == "pottery-caroline"
    hits = call("conversation.search", ME, {"namespace": NS, "query": "pottery class Melanie"})["hits"]
    assert {hit["name"] for hit in hits if hit["msg_id"] in pottery} == {"Melanie", "Caroline"}


def test_the_lifts_are_the_hybrid_modes_alone(corpus):
    body = {"namespace": NS, "query": "Which cabin did we book two weeks ago?", "now": ASKED.isoformat()}
    for mode in ("semantic", "lexical"):
        hits = call("conversation.search", ME, {**body, "search_mode": mode, "limit": 20})["hits"]
        ranked = [hit["msg_id"] for hit in hits if hit["msg_id"] in CABINS]
        assert ranked == ["cabin-two-days", "cabin-two-weeks"], mode  # equal texts: the newer first


@pytest.mark.parametrize(
    ("now", "says"),
    [
        ("2999-01-01T00:00:00+00:00", "future"),
        ("2026-06-10T12:00:00", "timezone"),
        ("1969-12-31T23:00:00Z", "1970"),
        ("yesterday", "datetime"),
    ],
)
def test_a_moment_out_of_bounds_is_refused(client, make_token, now, says):
    enable_logging(NS)
    answer = client.post(
        "/v1/conversation.search",
        json={"namespace": NS, "query": "cabin", "now": now},
        headers=make_token(NS),
    )
    assert answer.status_code == 422 and answer.json()["field"] == "now", answer.text
    assert says in answer.json()["error"], answer.json()


def test_a_speaker_name_is_bounded(client, make_token):
    enable_logging(NS)
    body = {"namespace": NS, "thread_id": "bounded", "role": "user", "content": "hello"}
    for name in ("", "x" * 129):
        refused = client.post("/v1/conversation.append", json={**body, "name": name}, headers=make_token(NS))
        assert refused.status_code == 422 and refused.json()["field"] == "name", refused.text
