"""pipelines.hints: the days a query's time words name, read against the moment it is asked from,
and whose words it asks about."""

from datetime import UTC, date, datetime

import pytest

from pipelines import hints

NOW = datetime(2024, 3, 20, 15, 30, tzinfo=UTC)  # a Wednesday


def covered(text: str, day: date, now: datetime = NOW) -> bool:
    return any(a <= day <= b for a, b in hints.windows(text, now))


@pytest.mark.parametrize(
    ("text", "meant"),
    [
        ("What did I buy two weeks ago?", date(2024, 3, 6)),
        ("the restaurant from 3 days ago", date(2024, 3, 17)),
        ("what we planned a couple of months back", date(2024, 1, 20)),
        ("what did we decide yesterday", date(2024, 3, 19)),
        ("the bug I hit this morning", date(2024, 3, 20)),
        ("the concert last Saturday", date(2024, 3, 16)),
        ("where did I go last weekend", date(2024, 3, 17)),
        ("what did you recommend last week", date(2024, 3, 12)),
        ("the plan from last month", date(2024, 2, 25)),
        ("the hike in October", date(2023, 10, 12)),  # the last October before now
        ("What did I do on March 3rd?", date(2024, 3, 3)),
        ("the party on Dec. 31", date(2023, 12, 31)),
        ("our trip last year", date(2023, 7, 1)),
    ],
)
def test_a_time_expression_names_the_days_it_means(text, meant):
    assert covered(text, meant)


@pytest.mark.parametrize(
    ("text", "not_meant"),
    [
        ("What did I buy two weeks ago?", date(2024, 1, 6)),
        ("what did we decide yesterday", date(2024, 3, 10)),
        ("the hike in October", date(2024, 3, 1)),
        ("the concert last Saturday", date(2024, 3, 9)),
    ],
)
def test_a_window_is_no_wider_than_its_words_allow(text, not_meant):
    assert hints.windows(text, NOW) and not covered(text, not_meant)


@pytest.mark.parametrize(
    "text",
    [
        "May I ask what my September trip cost?",  # a verb, and a month naming a thing
        "We should march on with the migration",
        "an idea week ago",  # no count: "a" is inside another word
        "What is the capital of France?",
    ],
)
def test_words_that_name_no_time_give_no_window(text):
    assert hints.windows(text, NOW) == []


def test_the_days_move_with_the_moment_asked_from():
    later = datetime(2025, 1, 5, tzinfo=UTC)
    assert covered("what did we decide yesterday", date(2025, 1, 4), later)
    assert not covered("what did we decide yesterday", date(2024, 3, 19), later)


@pytest.mark.parametrize(
    ("text", "role"),
    [
        ("What did you suggest for the slow query?", "assistant"),
        ("Can you remind me of the recipe you gave me?", "assistant"),
        ("What was your previous recommendation on shoes?", "assistant"),
        ("What did I say about the flight?", "user"),
        ("Where did my sister move to?", "user"),
        ("Can you tell me where I parked?", "user"),  # asks the assistant now, about the user
        ("What is the capital of France?", None),
    ],
)
def test_a_question_about_someones_words_names_their_role(text, role):
    assert hints.role(text) == role


def test_a_speaker_is_named_when_exactly_one_of_the_names_is_said_whole():
    names = {"Melanie", "Caroline", "Jo"}
    assert hints.speaker("What did Melanie paint last summer?", names) == "Melanie"
    assert hints.speaker("What did Caroline's brother study?", names) == "Caroline"
    assert hints.speaker("When did Melanie and Caroline meet?", names) is None  # two: no lift
    assert hints.speaker("What did Mel paint?", names) is None  # not the whole name
    assert hints.speaker("What did Joanna say?", names) is None  # a name inside another word
    assert hints.speaker("what did melanie paint?", names) is None  # as written
