"""The dashboard in headless Chromium against a live `loom up`: sign in, the Record switch, a
thread, a search with its leg scores, a failed run retried to success, a brief, a memory thread
found and pinned; and a viewer who sees no admin button. Each test leaves a screenshot in
.test-output/browser/."""

import json
import re
import uuid

import pytest

from tests.browser.conftest import op, sign_in
from tests.e2e.conftest import wait_for

pytestmark = pytest.mark.e2e


@pytest.fixture
def ns() -> str:
    return f"ui-{uuid.uuid4().hex[:8]}"


def test_sign_in_flip_the_record_switch_and_see_an_append_stored(live, browser_page, ns):
    assert f"Dashboard on http://127.0.0.1:{live.port}/ui" in live.printed()  # where `loom up` says
    page = browser_page
    op(live, "conversation.set_logging", {"namespace": ns, "enabled": False})
    assert not op(
        live, "conversation.append", {"namespace": ns, "thread_id": "t", "role": "user", "content": "lost"}
    )["stored"]
    sign_in(page, live, live.admin)
    row = page.locator("tr", has_text=ns)
    assert row.locator(".switch").inner_text() == "Off"
    page.once("dialog", lambda dialog: dialog.accept())  # "Start recording …?"
    row.locator("button[data-action=record]").click()
    page.wait_for_selector(f"text={ns}: recording on")
    assert page.locator("tr", has_text=ns).locator(".switch").inner_text() == "On"
    said = op(
        live,
        "conversation.append",
        {"namespace": ns, "thread_id": "t", "role": "user", "content": "kept now"},
    )
    assert said["stored"]
    page.reload()
    assert page.locator("tr", has_text=ns).locator("td.num").inner_text() == "1"


def test_open_a_thread_and_read_its_turns_with_a_secret_masked(live, browser_page, ns):
    page = browser_page
    op(live, "conversation.set_logging", {"namespace": ns, "enabled": True})
    op(live, "conversation.create", {"namespace": ns, "thread_id": "deploy", "title": "Deploying the API"})
    for role, content in (
        ("user", "How do we deploy the API to staging?"),
        ("assistant", "Run make deploy ENV=staging; it builds the image and rolls the pods."),
        ("user", "the staging db password=Xk29!aPq7vR, use it"),
    ):
        op(
            live,
            "conversation.append",
            {"namespace": ns, "thread_id": "deploy", "role": role, "content": content},
        )
    sign_in(page, live, live.admin)
    page.click(f"a:text-is('{ns}')")
    page.click("text=Deploying the API")
    page.wait_for_selector("h1:text('Deploying the API')")
    assert page.locator("li.turn").count() == 3
    assert "make deploy ENV=staging" in page.inner_text("ol.turns")
    assert "Xk29!aPq7vR" not in page.content() and page.locator("li.turn.high .masked").count() == 1


def test_run_a_search_and_see_each_legs_score(live, browser_page, ns):
    page = browser_page
    op(live, "conversation.set_logging", {"namespace": ns, "enabled": True})
    turns = [
        "The flaky checkout test fails because the payment mock times out after 2 seconds.",
        "We moved the nightly backup to 03:00 UTC so it stops colliding with the batch import.",
    ]
    for i, content in enumerate(turns):
        op(
            live,
            "conversation.append",
            {"namespace": ns, "thread_id": "t", "role": "user", "content": content, "msg_id": f"m{i}"},
        )
    wait_for(
        lambda: op(
            live,
            "conversation.search",
            {"namespace": ns, "query": "checkout payment mock", "search_mode": "semantic"},
        )["hits"],
        60,
        "the turns to be embedded",
    )
    sign_in(page, live, live.admin)
    page.goto(f"{live.url}/ui/search")
    page.fill("input[name=query]", "checkout payment mock")
    page.select_option("select[name=namespace]", ns)
    page.click("button:text('Search')")
    first = page.locator("tr.hit").first
    first.wait_for()
    assert "payment mock times out" in first.inner_text()
    legs = first.locator(".leg").all_inner_texts()
    assert set(legs) == {"semantic", "lexical"}, legs
    scores = first.locator("td.num").all_inner_texts()  # rank, semantic, lexical, fused
    assert all(re.match(r"^\d", s) for s in scores), scores
    assert "candidates" in page.inner_text("p.meta")


def test_retry_a_failed_run_and_watch_it_succeed(live, browser_page, ns):
    page = browser_page
    op(live, "conversation.set_logging", {"namespace": ns, "enabled": True})
    turn = op(
        live,
        "conversation.append",
        {"namespace": ns, "thread_id": "t", "role": "user", "content": "embed me again"},
    )
    run_id = wait_for(
        lambda: live.sql(
            "SELECT r.id FROM stage_runs r JOIN embeddings e ON r.subject = 'embedding:' || e.id"
            " WHERE e.turn_id = %s AND r.stage = 'embedding' AND r.status = 'succeeded'",
            turn["turn_id"],
        ),
        60,
        "the first embedding run",
    )[0][0]
    attempt = {"attempt": 3, "at": "2026-12-01T10:00:00+00:00", "error": "EmbedderUnavailable: down"}
    live.sql(
        "UPDATE stage_runs SET status = 'failed', last_error = 'EmbedderUnavailable: down', attempts = 3,"
        " history = jsonb_build_array(CAST(%s AS jsonb)) WHERE id = %s RETURNING id",
        json.dumps(attempt),
        run_id,
    )
    sign_in(page, live, live.admin)
    page.goto(f"{live.url}/ui/runs?stage=embedding&status=failed")
    page.click(f"a[href='/ui/runs/{run_id}']")
    assert page.inner_text("h1 .status") == "failed" and "EmbedderUnavailable: down" in page.inner_text(
        "table.attempts"
    )
    page.click("button[data-action=retry]")
    page.wait_for_selector(f"text=run {run_id} queued again")
    # No reload: the page updates itself while the run is pending or running.
    page.wait_for_selector("h1 .status.st-succeeded", timeout=60_000)
    assert page.locator("button[data-action=retry]").count() == 0
    # Its state first, the failed attempt kept below as history, not as a current error.
    assert "EmbedderUnavailable: down" not in page.inner_text("dl.record")
    assert "EmbedderUnavailable: down" in page.inner_text("table.attempts")
    assert "succeeded on attempt" in page.inner_text("main")


def test_a_pending_runs_page_updates_itself_until_the_run_is_done(live, browser_page):
    page = browser_page
    # Claimable only in an hour: no worker or sweep touches it while the page watches.
    [(run_id,)] = live.sql(
        "INSERT INTO stage_runs (stage, subject, idem_key, status, attempts, created_at, updated_at,"
        " available_at) VALUES ('embedding', 'embedding:0', %s, 'pending', 0, now(), now(),"
        " now() + interval '1 hour') RETURNING id",
        f"ui-watch-{uuid.uuid4().hex}",
    )
    sign_in(page, live, live.admin)
    page.goto(f"{live.url}/ui/runs/{run_id}")
    assert page.inner_text("h1 .status") == "pending" and page.locator("[data-refresh]").count() == 1
    live.sql("UPDATE stage_runs SET status = 'succeeded' WHERE id = %s RETURNING id", run_id)
    page.wait_for_selector("h1 .status.st-succeeded", timeout=10_000)  # no reload: the script swapped it in
    assert page.locator("[data-refresh]").count() == 0


def test_read_a_brief_rendered_with_its_revisions(live, browser_page, ns):
    page = browser_page
    key = "session/ui-brief"
    op(
        live,
        "session.brief_save",
        {
            "namespace": ns,
            "brief_key": key,
            "sections": {"goal": "Ship the login fix", "status": "tests green"},
        },
    )
    op(
        live,
        "session.brief_save",
        {
            "namespace": ns,
            "brief_key": key,
            "sections": {"status": "deployed to staging", "next_steps": ["watch the error rate"]},
        },
    )
    sign_in(page, live, live.admin)
    page.goto(f"{live.url}/ui/briefs?namespace={ns}")
    page.click(f"a:text-is('{key}')")
    article = page.locator("article.markdown")
    assert "deployed to staging" in article.inner_text() and article.locator("h2, h3").count() >= 1
    assert "revision 2 of 2" in page.inner_text("p.meta")
    page.click(".revisions a:text-is('1')")
    assert "tests green" in page.inner_text("article.markdown")


def test_a_viewer_sees_no_admin_button(live, browser_page, ns):
    page = browser_page
    op(live, "conversation.set_logging", {"namespace": ns, "enabled": True})
    op(live, "conversation.append", {"namespace": ns, "thread_id": "t", "role": "user", "content": "hello"})
    viewer = live.cli("tokens", "create", "--namespace", ns, "--role", "viewer").strip()
    sign_in(page, live, viewer)
    assert page.locator("tr", has_text=ns).count() == 1
    assert page.locator("button[data-action=record]").count() == 0
    assert page.locator("nav >> text=Stage runs").count() == 0
    page.click(f"a:text-is('{ns}')")
    page.click("a:text-is('t')")
    assert page.locator("button[data-action=delete]").count() == 0
    page.goto(f"{live.url}/ui/runs")
    assert "every namespace" in page.inner_text("p.error")


def test_search_the_memory_and_pin_a_thread(live, browser_page, ns):
    page = browser_page
    # The namespace picker offers what namespaces.list knows: here, a namespace with a Record switch.
    op(live, "conversation.set_logging", {"namespace": ns, "enabled": True})
    for content in (
        "The staging database is rebuilt every Sunday night.",
        "Priya owns the payments ledger migration.",
    ):
        op(live, "memory.set", {"namespace": ns, "content": content})
    sign_in(page, live, live.admin)
    page.click("nav >> text=Memory")
    assert "Name the namespace" in page.inner_text("main")  # the operator's token covers every one
    page.fill("input[name=query]", "payments ledger")
    page.select_option("select[name=namespace]", ns)
    page.select_option("select[name=mode]", "lexical")
    page.click("button:text('Search')")
    page.wait_for_selector("h2:has-text('Found for')")
    assert page.locator("tr.memory").count() == 1  # the other thread shares no word with the query
    assert "Priya owns the payments ledger migration." in page.inner_text("tr.memory")
    page.locator("tr.memory button[data-action=pin]").click()
    page.wait_for_selector("p.said:has-text('pinned')")
    pinned = page.locator("tr.memory.pinned")
    assert pinned.count() == 1 and "payments ledger" in pinned.inner_text()
    assert pinned.locator("button[data-action=pin]").count() == 0 and page.locator("tr.memory").count() == 2
