"""Every dashboard page at a phone's width (390 px) and a laptop's (1280 px), with realistic data
(a long thread id, long turns, a URL with no space to break at, a search with several hits):
none scrolls sideways, and each is screenshotted for docs/dashboard.md (`make screenshots`).
And the namespace picker of Search, Briefs and Memory: the namespaces the token covers."""

import uuid
from urllib.parse import urlencode

import pytest

from tests.browser.conftest import OUTPUT, op, sign_in
from tests.e2e.conftest import wait_for

pytestmark = pytest.mark.e2e

PHONE, LAPTOP = 390, 1280
# As a coding agent names a session's thread: long, and no space to break it at.
THREAD = "release-2.4/claude-code-session-6f1d2c9e4b8a4f7e9c3d2b1a0f9e8d7c"
LONG_NAMESPACE = "customer-success/assistants/enterprise-accounts/eu-west-1/production/q4-migration-rehearsal"
PIPELINE = (
    "https://ci.example.com/acme/platform/-/pipelines/184467/jobs/"
    "migration-rehearsal-staging-eu-west-1?attempt=2&ref=release%2F2.4.0"
)


@pytest.fixture(scope="module")
def showcase(live) -> dict:
    """A namespace with a titled thread, its brief, memory threads and a night woven; the names
    the pages' addresses need."""
    ns = "acme/release-engineering"  # one showcase a run: a fixed name, for the screenshots
    op(live, "conversation.set_logging", {"namespace": ns, "enabled": True})
    # A long namespace name: in the conversations' list and in every namespace picker.
    op(live, "conversation.set_logging", {"namespace": LONG_NAMESPACE, "enabled": True})
    op(live, "conversation.create", {"namespace": ns, "thread_id": THREAD, "title": "Cutting release 2.4"})
    for role, content in (
        ("user", "What is left on the release checklist for 2.4?"),
        (
            "assistant",
            "Two items on the release checklist: bump the schema version in the same pull request as "
            "its migration, then run the migration rehearsal on staging against last night's snapshot. "
            "The rehearsal takes about twenty minutes; the checklist says to watch the lock waits.",
        ),
        ("user", f"The rehearsal passed: {PIPELINE} — tag it."),
        (
            "assistant",
            "Tagged v2.4.0 at 9f2c4e1 and pushed; the release pipeline is running.",
        ),
    ):
        op(
            live,
            "conversation.append",
            {"namespace": ns, "thread_id": THREAD, "role": role, "content": content},
        )
    op(
        live,
        "session.brief_save",
        {
            "namespace": ns,
            "brief_key": "session/release",
            "sections": {
                "goal": "Cut release 2.4",
                "status": f"tagged, pipeline running: {PIPELINE}",
                "decisions": ["rehearse the migration on staging first"],
                "next_steps": ["announce in #releases", "watch the error rate for an hour"],
            },
        },
    )
    for content, weight, subjects in (
        ("Release 2.4 ships only after the migration rehearsal passes on staging.", 0.9, ["release 2.4"]),
        ("Announce every release in #releases and watch the error rate for an hour.", 0.7, ["releases"]),
        ("The schema version is bumped in the same pull request as its migration.", 0.5, []),
    ):
        op(live, "memory.set", {"namespace": ns, "content": content, "weight": weight, "subjects": subjects})
    session = op(live, "context.pack", {"namespace": ns, "thread_id": THREAD})["session"]
    live.cli("night-weave", "--loom", session["loomId"], "--wait", "--timeout", "60")
    searched = {"namespace": ns, "query": "release checklist"}  # in hybrid mode, as the page searches
    wait_for(
        lambda: (
            sum("semantic" in hit["found_by"] for hit in op(live, "conversation.search", searched)["hits"])
            >= 3
        ),
        60,
        "the turns to be embedded",
    )
    [night] = op(live, "runs.list", {"stage": "night_weaving", "limit": 1})["runs"]
    return {"ns": ns, "run": night["id"]}


def pages(showcase: dict) -> dict[str, str]:
    """The pages the README and docs/dashboard.md picture, by the name of their screenshot."""
    ns = showcase["ns"]
    return {
        "conversations": "/ui/conversations",
        "threads": "/ui/threads?" + urlencode({"namespace": ns}),
        "thread": "/ui/thread?" + urlencode({"namespace": ns, "thread_id": THREAD}),
        "search": "/ui/search?" + urlencode({"query": "release checklist", "namespace": ns}),
        "briefs": "/ui/briefs?" + urlencode({"namespace": ns}),
        "brief": "/ui/brief?" + urlencode({"namespace": ns, "key": "session/release"}),
        "runs": "/ui/runs",
        "nights": "/ui/nights",
        "looms": "/ui/looms?" + urlencode({"namespace": ns}),
        "memory": "/ui/memory?" + urlencode({"namespace": ns}),
        "health": "/ui/health",
    }


SIDEWAYS = "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"


@pytest.mark.parametrize("width", [PHONE, LAPTOP])
def test_every_page_fits_the_width_without_scrolling_sideways_and_is_screenshotted(
    live, browser_page, showcase, width
):
    """The screenshots: pages/NAME.png at 1280 px, pages/narrow/NAME.png at 390 (the sign-in page
    and a run's are checked, not pictured: the README shows every picture docs/screenshots holds)."""
    page = browser_page
    page.set_viewport_size({"width": width, "height": 844 if width == PHONE else 860})
    shots = OUTPUT / "pages" / ("narrow" if width == PHONE else "")
    shots.mkdir(parents=True, exist_ok=True)
    too_wide = {}

    def check(name: str, path: str) -> None:
        answer = page.goto(live.url + path)
        assert answer.status == 200, name
        assert page.locator("p.error").count() == 0, (name, page.inner_text("main"))
        scrolled, shown = page.evaluate(SIDEWAYS)
        if scrolled > shown:
            too_wide[name] = scrolled

    check("sign-in", "/ui/login")
    sign_in(page, live, live.admin)
    check("run", f"/ui/runs/{showcase['run']}")
    for name, path in pages(showcase).items():
        check(name, path)
        page.screenshot(path=str(shots / f"{name}.png"))
    assert not too_wide, f"wider than the {width} px window: {too_wide}"
    # Each hit of the search reads as a paragraph, not as a column of a few characters.
    page.goto(live.url + pages(showcase)["search"])
    widths = [box["width"] for box in page.locator("tr.hit .excerpt").evaluate_all(BOXES)]
    assert len(widths) >= 3 and min(widths) > min(width * 0.75, 480), widths


BOXES = "cells => cells.map(cell => cell.getBoundingClientRect().toJSON())"


def picked(page) -> tuple[list[str], str]:
    """The namespace picker's choices and the one chosen."""
    choices = page.locator("select[name=namespace] option").evaluate_all("os => os.map(o => o.value)")
    return choices, page.locator("select[name=namespace]").input_value()


def test_the_namespace_picker_offers_every_namespace_of_the_token(live, browser_page):
    page = browser_page
    page.set_viewport_size({"width": PHONE, "height": 844})
    one, other = (f"ui-pick-{uuid.uuid4().hex[:6]}" for _ in range(2))
    for ns, said in ((one, "the blue kettle is on the shelf"), (other, "the green kettle is in the van")):
        op(live, "conversation.set_logging", {"namespace": ns, "enabled": True})
        op(live, "conversation.append", {"namespace": ns, "thread_id": "t", "role": "user", "content": said})
        op(
            live,
            "session.brief_save",
            {"namespace": ns, "brief_key": f"session/{ns}", "sections": {"goal": said}},
        )
        op(live, "memory.set", {"namespace": ns, "content": f"Remember: {said}."})
    sign_in(page, live, live.admin)

    page.goto(f"{live.url}/ui/search")
    choices, chosen = picked(page)
    assert {one, other} <= set(choices) and chosen == "", choices  # every namespace: none assumed
    page.fill("input[name=query]", "kettle")
    page.select_option("select[name=namespace]", other)
    page.select_option("select[name=mode]", "lexical")
    page.click("button:text('Search')")
    page.locator("tr.hit").first.wait_for()
    assert "green kettle" in page.inner_text("table.hits") and "blue kettle" not in page.inner_text(
        "table.hits"
    )
    assert picked(page)[1] == other  # the results page keeps the choice

    page.goto(f"{live.url}/ui/briefs")
    page.select_option("select[name=namespace]", one)
    page.click("button:text('Show')")
    page.wait_for_selector(f"a:text-is('session/{one}')")
    assert picked(page)[1] == one and f"session/{other}" not in page.inner_text("main")

    page.click("nav >> text=Memory")
    page.select_option("select[name=namespace]", other)
    page.click("button:text('Search')")
    page.wait_for_selector("h1:has-text('Memory of')")
    assert "green kettle" in page.inner_text("table.memory") and picked(page)[1] == other


def test_a_token_of_one_namespace_is_offered_that_one_chosen(live, browser_page):
    page = browser_page
    ns = f"ui-pick-{uuid.uuid4().hex[:6]}"
    op(live, "conversation.set_logging", {"namespace": ns, "enabled": True})
    op(
        live,
        "conversation.append",
        {"namespace": ns, "thread_id": "t", "role": "user", "content": "a red kettle"},
    )
    sign_in(page, live, live.cli("tokens", "create", "--namespace", ns, "--role", "viewer").strip())
    for path in ("/ui/search", "/ui/briefs", "/ui/memory"):
        page.goto(live.url + path)
        assert picked(page) == ([ns], ns), path
    page.goto(f"{live.url}/ui/search")
    page.fill("input[name=query]", "kettle")
    page.select_option("select[name=mode]", "lexical")
    page.click("button:text('Search')")
    assert "red kettle" in page.locator("tr.hit").first.inner_text()
