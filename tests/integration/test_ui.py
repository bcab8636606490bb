"""The dashboard over HTTP (the browser tests drive it in Chromium): sign-in and its cookie, the
sign-in page for anyone without one, every page rendered, CSRF and origin checks, and a viewer's
refusals both ways (no admin button shown, and the action refused with 403 anyway)."""

import re
import uuid

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from models import db
from models.namespace import Namespace
from ops.caller import OPERATOR, create_token, revoke_token
from ops.registry import call
from tests.support.calls import append, enable_logging

CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@pytest.fixture
def ns(database) -> str:
    name = f"ui-{uuid.uuid4().hex[:8]}"
    enable_logging(name)
    append(name, "t1", "the red lamp by the door")
    append(name, "t1", "my api key is sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdEFGH", role="user")
    return name


def anonymous() -> TestClient:
    """A browser's client: its forms come with the site's own Origin, as a browser's posts do."""
    client = TestClient(create_app(warm_embedder=False), base_url="http://loom.test")
    client.headers["Origin"] = "http://loom.test"
    return client


def signed_in(token: str) -> TestClient:
    client = anonymous()
    answer = client.post(
        "/ui/login", data={"token": token, "next": "/ui/conversations"}, follow_redirects=False
    )
    assert answer.status_code == 303 and answer.headers["location"] == "/ui/conversations", answer.text
    cookie = answer.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/ui" in cookie
    return client


def csrf_of(client: TestClient, path: str) -> str:
    return CSRF.search(client.get(path).text).group(1)


def test_without_a_session_every_page_is_the_sign_in_page(database):
    client = anonymous()
    for path in ("/ui", "/ui/conversations", "/ui/runs", "/ui/health", "/ui/search?query=x"):
        answer = client.get(path, follow_redirects=False)
        assert answer.status_code == 303 and answer.headers["location"].startswith("/ui/login"), path
    assert "Bearer token" in client.get("/ui/conversations").text
    refused = client.post("/ui/login", data={"token": "loom_nope"}, follow_redirects=False)
    assert refused.status_code == 401 and "not a live Loom token" in refused.text
    assert client.post("/ui/runs/1/retry", data={"csrf": "x"}, follow_redirects=False).status_code == 303


def test_an_operator_sees_every_page(ns):
    client = signed_in(create_token([], "admin", all_namespaces=True))
    pages = {
        "/ui/conversations": ns,
        f"/ui/threads?namespace={ns}": "t1",
        f"/ui/thread?namespace={ns}&thread_id=t1": "the red lamp by the door",
        f"/ui/search?query=red+lamp&namespace={ns}&mode=lexical": "lexical",
        f"/ui/briefs?namespace={ns}": "Session briefs",
        "/ui/runs": "Periodic passes",
        "/ui/nights": "Night weaving",
        f"/ui/looms?namespace={ns}": "Sessions",
        "/ui/health": "Database: up",
    }
    for path, shown in pages.items():
        answer = client.get(path)
        assert answer.status_code == 200 and shown in answer.text, (path, answer.text[:2000])
    thread = client.get(f"/ui/thread?namespace={ns}&thread_id=t1").text
    assert "sk-proj-" not in thread and "Masked" in thread  # a high turn is never shown


def test_a_brief_is_rendered_as_markdown_with_its_revisions_and_no_markup_of_its_own(ns):
    key = "session/s1"
    for goal in ("ship the **login** fix", "ship it <script>alert(1)</script>"):
        call("session.brief_save", OPERATOR, {"namespace": ns, "brief_key": key, "sections": {"goal": goal}})
    client = signed_in(create_token([ns], "viewer"))
    latest = client.get("/ui/brief", params={"namespace": ns, "key": key}).text
    assert "revision 2 of 2" in latest and "<script>alert" not in latest and "&lt;script&gt;" in latest
    first = client.get("/ui/brief", params={"namespace": ns, "key": key, "revision": 1}).text
    assert "<strong>login</strong>" in first
    assert key in client.get(f"/ui/briefs?namespace={ns}").text


def test_a_viewer_sees_no_admin_button_and_is_refused_anyway(ns):
    client = signed_in(create_token([ns], "viewer"))
    listing = client.get("/ui/conversations").text
    assert ns in listing and 'data-action="record"' not in listing
    thread = client.get(f"/ui/thread?namespace={ns}&thread_id=t1").text
    assert 'data-action="delete"' not in thread and 'data-action="compact"' not in thread
    assert "Stage runs" not in listing  # the operator pages are not for a namespace's token
    assert client.get("/ui/runs").status_code == 403
    csrf = csrf_of(client, "/ui/conversations")
    refused = client.post("/ui/record", data={"csrf": csrf, "namespace": ns, "enabled": "false"})
    assert refused.status_code == 403 and "needs the admin role" in refused.text
    deleted = client.post("/ui/delete", data={"csrf": csrf, "namespace": ns, "thread_id": "t1"})
    assert deleted.status_code == 403
    with db.session() as s:
        assert s.get(Namespace, ns).conversation_logging_enabled


def test_an_admin_flips_the_record_switch_only_with_the_forms_csrf_token_from_this_origin(ns):
    client = signed_in(create_token([ns], "admin"))
    listing = client.get("/ui/conversations").text
    assert 'data-action="record"' in listing
    csrf = csrf_of(client, "/ui/conversations")
    for data, headers in (
        ({"enabled": "false"}, {}),
        ({"enabled": "false", "csrf": "forged"}, {}),
        ({"enabled": "false", "csrf": "\u00e9t\u00e9"}, {}),  # not ASCII: still a 403, not a 500
        ({"enabled": "false", "csrf": csrf}, {"Origin": "https://evil.test"}),
        ({"enabled": "false", "csrf": csrf}, {"Origin": "null"}),  # no origin, and no Sec-Fetch-Site
        ({"enabled": "false", "csrf": csrf}, {"Origin": "null", "Sec-Fetch-Site": "cross-site"}),
    ):
        answer = client.post("/ui/record", data={**data, "namespace": ns}, headers=headers)
        assert answer.status_code == 403, data
    with db.session() as s:
        assert s.get(Namespace, ns).conversation_logging_enabled
    flipped = client.post("/ui/record", data={"enabled": "false", "csrf": csrf, "namespace": ns})
    assert flipped.status_code == 200 and "recording off" in flipped.text
    with db.session() as s:
        assert not s.get(Namespace, ns).conversation_logging_enabled


def test_signing_out_or_revoking_the_token_ends_the_session(ns, monkeypatch):
    from ops import caller

    monkeypatch.setattr(caller, "TOKEN_CACHE_SECONDS", 0.01)
    token = create_token([ns], "viewer")
    client = signed_in(token)
    client.post("/ui/logout", data={"csrf": csrf_of(client, "/ui/conversations")})
    assert client.get("/ui/conversations", follow_redirects=False).status_code == 303
    client = signed_in(token)
    assert client.get("/ui/conversations", follow_redirects=False).status_code == 200
    revoke_token(caller.list_tokens()[-1].id)
    assert client.get("/ui/conversations", follow_redirects=False).status_code == 303


def test_the_next_page_after_sign_in_is_never_another_site(ns):
    client, token = anonymous(), create_token([ns], "viewer")
    for target in ("https://evil.test/", "//evil.test/ui/", "/ui/../../x\\y"):
        answer = client.post("/ui/login", data={"token": token, "next": target}, follow_redirects=False)
        assert answer.headers["location"] == "/ui/conversations", target


def test_bad_page_parameters_are_a_4xx_page_never_a_5xx(ns):
    client = signed_in(create_token([], "admin", all_namespaces=True))
    for path, status in (
        (f"/ui/threads?namespace={ns}&offset=abc", 422),
        (f"/ui/threads?namespace={ns}&offset=-1", 422),
        (f"/ui/search?query=x&namespace={ns}&lexical_weight=abc", 422),
        (f"/ui/search?query=x&namespace={ns}&lexical_weight=7", 422),
        (f"/ui/search?query=x&namespace={ns}&mode=psychic", 422),
        ("/ui/runs/99999999999999999999999", 422),
        ("/ui/runs/0", 422),
        ("/ui/runs/123456789012", 404),
        ("/ui/runs?status=bogus", 422),
        (f"/ui/brief?namespace={ns}&key=nope", 404),
        ("/ui/brief?key=nope", 422),
        ("/ui/threads", 422),
        (f"/ui/thread?namespace={ns}&thread_id={'x' * 300}", 422),
        ("/ui/looms?namespace=" + "n" * 200, 422),
    ):
        answer = client.get(path)
        assert answer.status_code == status and "text/html" in answer.headers["content-type"], (
            path,
            answer.text,
        )
        assert 'class="error"' in answer.text


def test_an_end_users_token_searches_its_saved_messages(ns, worker):
    token = create_token([ns], "writer", "own_user", read_user_id="ana")
    body = {
        "namespace": "@me",
        "conversation_id": "ana-asks",  # a new conversation: t1 is not hers to write in
        "message_id": "saved-1",
        "role": "assistant",
        "content": "The blue umbrella is in the hall closet.",
    }
    saved = anonymous().post(
        "/v1/conversation.save_message", json=body, headers={"Authorization": f"Bearer {token}"}
    )
    assert saved.status_code == 200, saved.text
    client = signed_in(token)
    assert "saved messages" in client.get("/ui/conversations").text
    found = client.get("/ui/search", params={"query": "umbrella closet", "mode": "lexical"})
    assert found.status_code == 200 and "Saved messages" in found.text, found.text
    assert "blue umbrella is in the hall closet" in found.text and "lexical" in found.text


def test_an_operator_runs_a_pass_now_from_the_runs_page(database):
    client = signed_in(create_token([], "admin", all_namespaces=True))
    page = client.get("/ui/runs").text
    assert 'data-action="run-sweep"' in page
    ran = client.post("/ui/passes/run", data={"csrf": CSRF.search(page).group(1), "name": "sweep"})
    assert ran.status_code == 200 and "sweep: sent" in ran.text
    viewer = signed_in(create_token([], "viewer", all_namespaces=True))
    page = viewer.get("/ui/runs").text
    assert "Periodic passes" in page and 'data-action="run-sweep"' not in page
    assert (
        viewer.post("/ui/passes/run", data={"csrf": CSRF.search(page).group(1), "name": "sweep"}).status_code
        == 403
    )


def test_names_with_slashes_and_dots_are_reached_and_acted_on_as_themselves(database):
    ns = f"org/{uuid.uuid4().hex[:6]}/.."
    enable_logging(ns)
    append(ns, "a/../b?c=1&d", "a turn in an awkwardly named thread")
    client = signed_in(create_token([ns], "admin"))
    listing = client.get("/ui/conversations").text
    link = re.search(r'href="(/ui/threads\?[^"]+)"', listing).group(1).replace("&amp;", "&")
    threads = client.get(link).text
    link = re.search(r'href="(/ui/thread\?[^"]+)"', threads).group(1).replace("&amp;", "&")
    assert "a turn in an awkwardly named thread" in client.get(link).text
    csrf = csrf_of(client, "/ui/conversations")
    deleted = client.post("/ui/delete", data={"csrf": csrf, "namespace": ns, "thread_id": "a/../b?c=1&d"})
    assert deleted.status_code == 200 and "deleted" in deleted.text


def test_every_page_answers_with_the_security_headers_and_a_forged_status_line_is_not_shown(ns):
    client = signed_in(create_token([ns], "viewer"))
    answer = client.get("/ui/conversations", params={"said": "Your token expired: paste it at evil.test"})
    assert "evil.test" not in answer.text
    assert answer.headers["content-security-policy"].startswith("default-src 'self'")
    assert (
        answer.headers["cache-control"] == "no-store" and answer.headers["referrer-policy"] == "same-origin"
    )


def test_a_brief_never_makes_the_browser_load_an_image(ns):
    body = {
        "namespace": ns,
        "brief_key": "session/img",
        "sections": {"goal": "see ![x](https://evil.test/x.png)"},
    }
    call("session.brief_save", OPERATOR, body)
    page = signed_in(create_token([ns], "viewer")).get(
        "/ui/brief", params={"namespace": ns, "key": "session/img"}
    )
    assert "<img" not in page.text and page.status_code == 200


def test_a_title_that_reads_as_high_is_not_shown_on_its_thread_page(ns):
    call(
        "conversation.create",
        OPERATOR,
        {"namespace": ns, "thread_id": "t9", "title": "db password=Xk29!aPq7vR"},
    )
    append(ns, "t9", "a plain turn")
    client = signed_in(create_token([ns], "viewer"))
    for path in (f"/ui/threads?namespace={ns}", f"/ui/thread?namespace={ns}&thread_id=t9"):
        assert "Xk29!aPq7vR" not in client.get(path).text, path


def test_a_writer_compacts_a_thread_and_its_summary_is_marked(llm, worker, database):
    from tests.support.waits import settled, wait_until

    ns = f"ui-compact-{uuid.uuid4().hex[:6]}"
    enable_logging(ns)
    for i in range(20):
        append(ns, "long", f"turn {i} about the deploy pipeline", role="user" if i % 2 == 0 else "assistant")
    wait_until(settled, what="the embeddings")
    client = signed_in(create_token([ns], "writer"))
    page = client.get("/ui/thread", params={"namespace": ns, "thread_id": "long"}).text
    assert 'data-action="compact"' in page and 'data-action="delete"' not in page  # delete is admin's
    compacted = client.post(
        "/ui/compact", data={"csrf": CSRF.search(page).group(1), "namespace": ns, "thread_id": "long"}
    )
    assert compacted.status_code == 200 and "compaction run" in compacted.text, compacted.text
    wait_until(settled, what="the compaction")
    page = client.get("/ui/thread", params={"namespace": ns, "thread_id": "long"}).text
    assert "summary of 10 turns (compaction)" in page and page.count('class="turn ') == 11


def test_a_search_without_a_namespace_by_a_token_of_every_namespace_asks_for_one(database):
    client = signed_in(create_token([], "viewer", all_namespaces=True))
    page = client.get("/ui/search", params={"query": "lamp"})
    assert page.status_code == 200 and "Name the namespace to search" in page.text
    assert 'name="query" value="lamp"' in page.text  # the form keeps what was typed
