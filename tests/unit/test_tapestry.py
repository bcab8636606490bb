"""The tapestry's choice without a database: its order, its episodes (a few, never two that say
the same thing), its budget of tokens and its screen."""

import uuid
from datetime import UTC, datetime, timedelta

from models.memory import MemoryThread
from pipelines.tapestry import HEADING, MAX_EPISODES, choose, gist, line, render
from pipelines.token_budget import tokens

T0 = datetime(2026, 5, 1, tzinfo=UTC)


def thread(content: str, kind: str = "Semantic", weight: float = 0.5, age: int = 0, **more) -> MemoryThread:
    return MemoryThread(
        id=uuid.uuid4(),
        loom_id=uuid.uuid4(),
        namespace="ns",
        content=content,
        kind=kind,
        weight=weight,
        basis="Said",
        digest="d",
        created_at=T0 - timedelta(days=age),
        updated_at=T0,
        **more,
    )


def test_episodes_that_differ_only_in_numbers_ids_and_session_names_say_the_same_thing():
    one = "In session 3f2b8c1e-5d4a-4e6b-9c7d-2a1b0c9d8e7f the agent ran 1 tool actions."
    two = "In session brave-otter the agent ran 12 tool actions."
    assert gist(one) == gist(two) == ("in", "session", "the", "agent", "ran", "tool", "actions")
    assert gist("`pytest -q tests/test_1.py` failed at 10:02") == gist(
        "`pytest -q tests/test_22.py` failed at 11:40"
    )
    assert gist("In session a the agent ran 3 tool actions, working on api/app.py.") != gist(one)
    assert gist("The deploy to staging failed.") != gist("The deploy to production failed.")


def test_pinned_then_about_the_subjects_then_facts_before_episodes_then_heavier_then_newer():
    pinned = thread("never deploy on Fridays", weight=0.1, pinned=True)
    about = thread("Ana reviews every schema change", weight=0.2)
    episode = thread("Ana's session fixed the login bug", kind="Episodic", weight=0.9)
    heavy = thread("the ledger is the source of truth", weight=0.9)
    light_new = thread("the wiki moved to Notion", weight=0.4)
    light_old = thread("the office has a piano", weight=0.4, age=30)
    how = thread("run make lint before pushing", kind="Procedural", weight=0.6)
    chosen = choose([light_old, episode, how, light_new, heavy, about, pinned], ["ana"], 8000)
    assert chosen == [pinned, about, episode, heavy, how, light_new, light_old]


def test_at_most_a_few_episodes_and_never_two_that_say_the_same_thing():
    ran = [
        thread(f"In session s-{i} the agent ran {i} tool actions.", kind="Episodic", age=i) for i in range(5)
    ]
    fixed = [thread(f"The flaky test {name} was fixed.", kind="Episodic", age=9) for name in "abcdef"]
    chosen = choose([*ran, *fixed], [], 8000)
    episodes = [t for t in chosen if t.kind == "Episodic"]
    assert len(episodes) == MAX_EPISODES and ran[0] in episodes
    assert len({gist(t.content) for t in episodes}) == len(episodes)
    pinned = thread("In session p the agent ran 4 tool actions.", kind="Episodic", pinned=True)
    assert choose([pinned, *ran], [], 8000) == [pinned]  # a pinned one stands for its twins


def test_what_is_woven_fits_the_budget_and_names_each_id():
    threads = [thread(f"fact {i}: " + "word " * 20, weight=i / 20) for i in range(20)]
    for budget in (50, 120, 400):
        text = render(choose(threads, [], budget))
        assert text is not None and tokens(text) <= budget
    woven = choose(threads, [], 120)
    assert render(woven) == "\n".join([HEADING, *(f"- {t.content} [{t.id}]" for t in woven)])
    assert line(woven[0]).endswith(f"[{woven[0].id}]")


def test_a_thread_that_reads_as_high_now_is_never_woven():
    secret = thread("the card is 4111 1111 1111 1111, exp 12/29", weight=1.0, pinned=True)
    kept = thread("the deploy window is Tuesday")
    assert choose([secret, kept], [], 8000) == [kept]
