"""The dashboard's Memory page over HTTP: a loom's memory threads with their fields and the turns
they come from, a search, pin / cut / reframe for a writer and refused to a viewer, each session's
tapestry linked to the threads it was woven from, the nights, and a tenant's bounds."""

import re
import uuid

import pytest
from sqlalchemy import text

from models import db
from ops.caller import OPERATOR, create_token
from ops.registry import call
from schedules.night_weaving import weave_night
from tests.integration.test_ui import CSRF, signed_in
from tests.support.calls import append, enable_logging
from tests.support.waits import settled, wait_until

SECRET = "my card is 4111 1111 1111 1111, exp 12/29"


@pytest.fixture
def ns(database) -> str:
    name = f"mem-{uuid.uuid4().hex[:8]}"
    enable_logging(name)
    return name


def remember(ns: str, content: str, **body) -> dict:
    answer = call("memory.set", OPERATOR, {"namespace": ns, "content": content, **body})
    assert answer["stored"], answer
    return answer["thread"]


def live_threads(ns: str) -> dict[str, dict]:
    return {t["id"]: t for t in call("memory.inspect", OPERATOR, {"namespace": ns})["threads"]}


def row_of(page: str, thread_id: str) -> str:
    """The memory thread's table row of the page."""
    found = re.search(rf'<tr class="memory[^"]*" id="mt-{thread_id}">.*?</tr>', page, re.S)
    assert found, page
    return found.group(0)


def night_id(page: str) -> str:
    return re.search(r'<tr class="night" id="night-([0-9a-f-]+)">', page).group(1)


def test_the_page_shows_the_threads_their_evidence_the_tapestries_and_the_nights(ns, worker):
    fact = remember(
        ns,
        "Priya leads the payments migration to the new ledger",
        kind="Procedural",
        weight=0.7,
        subjects=["Priya"],
        tags=["payments"],
        cues=["ledger cutover"],
        until="2031-05-01T00:00:00Z",
    )
    for i, (role, content) in enumerate(
        (("user", "Move the weekly sync to Thursdays."), ("assistant", "Done: Thursdays from next week."))
    ):
        append(ns, "sync", content, role=role, agent="guide", run_id="run-1", user_id="dana", msg_id=f"m{i}")
    pack = {"namespace": ns, "thread_id": "sync", "run_id": "run-1", "agent": "guide"}
    session = call("context.pack", OPERATOR, pack)["session"]
    assert session["tapestryThreadIds"] == [fact["id"]]
    with db.session() as s:  # suggested in the session and recalled: the night reinforces it
        s.execute(
            text(
                "UPDATE loom_sessions SET suggested_thread_ids = CAST(:ids AS uuid[]), "
                "recalled_thread_ids = CAST(:ids AS uuid[]) WHERE id = :id"
            ),
            {"ids": [fact["id"]], "id": session["id"]},
        )
    assert weave_night()
    wait_until(settled, what="the night's runs")
    [episode] = [t for t in live_threads(ns).values() if t["kind"] == "Episodic"]
    assert episode["evidenceIds"]

    viewer = signed_in(create_token([ns], "viewer"))
    page = viewer.get("/ui/memory").text  # the token's only namespace
    assert 'href="/ui/memory"' in page  # in the nav
    row = row_of(page, fact["id"])
    for shown in (
        fact["content"],
        "Procedural",
        "0.80",  # 0.7, reinforced by the night
        "Priya",
        "payments",
        "ledger cutover",
        "2031-05-01",
        "Said",
    ):
        assert shown in row, shown
    row = row_of(page, episode["id"])
    assert "Episodic" in row and "Woven" in row
    assert row.count(f'href="/ui/thread?namespace={ns}&amp;thread_id=sync"') == len(episode["evidenceIds"])
    tapestry = re.search(r'<details class="session".*?</details>', page, re.S).group(0)
    assert "What You Know" in tapestry and f'href="/ui/memory?namespace={ns}#mt-{fact["id"]}"' in tapestry
    assert "by the night of" in tapestry
    # What the night changed for the session: the episode it wrote, the weight it raised.
    changed = re.search(r'<div class="night-change">.*?</div>', tapestry, re.S).group(0)
    assert "1 episode written, 1 weight changed" in changed
    assert f'#mt-{episode["id"]}"' in re.search(r'<li class="episode">.*?</li>', changed, re.S).group(0)
    reweighed = re.search(r'<li class="reweighed">.*?</li>', changed, re.S).group(0)
    assert f'#mt-{fact["id"]}"' in reweighed and "0.70 → 0.80" in reweighed
    assert "a token for every namespace" in page  # the nights are the operator's

    operator = (
        signed_in(create_token([], "admin", all_namespaces=True)).get(f"/ui/memory?namespace={ns}").text
    )
    night = re.search(r'<tr class="night".*?</tr>', operator, re.S).group(0)
    assert re.search(r'class="num episodes">1<', night) and f'href="#session-{session["id"]}"' in night
    assert f'href="#night-{night_id(operator)}"' in operator  # each session's change links its night


def test_a_search_finds_a_thread_by_its_words(ns):
    wanted = remember(ns, "Priya leads the payments migration to the new ledger")
    remember(ns, "the office moves to Leeds in spring")
    page = signed_in(create_token([ns], "viewer")).get(
        "/ui/memory", params={"namespace": ns, "query": "payments ledger", "mode": "lexical"}
    )
    assert page.status_code == 200, page.text
    hits = re.findall(r'<tr class="memory[^"]*" id="mt-([^"]+)"', page.text)
    assert hits == [wanted["id"]] and "lexical" in page.text


def test_a_writer_pins_reframes_and_cuts_and_a_viewer_is_refused(ns):
    thread = remember(ns, "the deploy window is Tuesday")
    viewer = signed_in(create_token([ns], "viewer"))
    page = viewer.get("/ui/memory").text
    assert not re.search(r'data-action="(pin|cut|reframe)"', page)
    csrf = CSRF.search(page).group(1)
    for action, extra in (("pin", {}), ("cut", {}), ("reframe", {"content": "moved to Thursday"})):
        form = {"csrf": csrf, "namespace": ns, "thread": thread["id"], **extra}
        refused = viewer.post(f"/ui/memory/{action}", data=form)
        assert refused.status_code == 403 and "needs the writer role" in refused.text, action
    assert live_threads(ns)[thread["id"]] == thread

    writer = signed_in(create_token([ns], "writer"))
    page = writer.get("/ui/memory").text
    assert all(f'data-action="{a}"' in page for a in ("pin", "cut", "reframe"))
    form = {"csrf": CSRF.search(page).group(1), "namespace": ns, "thread": thread["id"]}
    assert writer.post("/ui/memory/pin", data={**form, "csrf": "forged"}).status_code == 403
    assert not live_threads(ns)[thread["id"]]["pinned"]

    pinned = writer.post("/ui/memory/pin", data=form)
    assert 'role="status">pinned “the deploy window is Tuesday”' in pinned.text
    assert "badge pinned" in row_of(pinned.text, thread["id"])
    assert live_threads(ns)[thread["id"]]["pinned"]

    reframed = writer.post(
        "/ui/memory/reframe", data={**form, "content": "the deploy window moved to Thursday"}
    )
    assert 'role="status">reframed as “the deploy window moved to Thursday”' in reframed.text
    assert "moved to Thursday" in row_of(reframed.text, thread["id"])
    assert live_threads(ns)[thread["id"]]["basis"] == "Reframed"
    refused = writer.post("/ui/memory/reframe", data={**form, "content": SECRET})
    assert 'role="status">not reframed' in refused.text and "4111" not in refused.text

    cut = writer.post("/ui/memory/cut", data=form)
    assert 'role="status">cut “the deploy window moved to Thursday”' in cut.text
    assert f'id="mt-{thread["id"]}"' not in cut.text
    assert thread["id"] not in live_threads(ns)


def test_a_tenant_sees_and_acts_on_its_own_namespaces_memory_only(ns):
    mine = remember(ns, "our standup is at nine")
    other = f"mem-{uuid.uuid4().hex[:8]}"
    theirs = remember(other, "the other tenant's launch is in May")
    writer = signed_in(create_token([ns], "writer"))
    page = writer.get("/ui/memory").text
    assert mine["content"] in page and theirs["content"] not in page
    assert writer.get("/ui/memory", params={"namespace": other}).status_code == 403
    csrf = CSRF.search(page).group(1)
    across = writer.post("/ui/memory/pin", data={"csrf": csrf, "namespace": other, "thread": theirs["id"]})
    assert across.status_code == 403
    smuggled = writer.post("/ui/memory/pin", data={"csrf": csrf, "namespace": ns, "thread": theirs["id"]})
    assert smuggled.status_code == 404
    assert not live_threads(other)[theirs["id"]]["pinned"]


def test_a_token_of_every_namespace_is_asked_which_and_bad_input_is_a_4xx_page(ns):
    thread = remember(ns, "a thread to act on")
    client = signed_in(create_token([], "admin", all_namespaces=True))
    asked = client.get("/ui/memory")
    assert asked.status_code == 200 and "Name the namespace" in asked.text
    for params, status in (
        ({"loom_id": "nope"}, 422),
        ({"loom_id": str(uuid.uuid4())}, 404),
        ({"query": "x", "mode": "psychic"}, 422),
        ({"query": "x" * 5000}, 422),
        ({"cursor": "forged"}, 422),
    ):
        answer = client.get("/ui/memory", params={"namespace": ns, **params})
        assert answer.status_code == status and 'class="error"' in answer.text, (params, answer.text)
    csrf = CSRF.search(asked.text).group(1)
    for action, form, status in (
        ("pin", {"thread": "nope"}, 422),
        ("cut", {"thread": str(uuid.uuid4())}, 404),
        ("reframe", {"thread": thread["id"], "content": ""}, 422),
        ("reframe", {"thread": thread["id"], "content": "x" * 9000}, 422),
        ("pin", {"thread": thread["id"], "loom_id": "nope"}, 422),
    ):
        answer = client.post(f"/ui/memory/{action}", data={"csrf": csrf, "namespace": ns, **form})
        assert answer.status_code == status and 'class="error"' in answer.text, (action, form, answer.text)


def test_another_namespace_picked_with_a_loom_of_the_first_shows_its_default_loom(ns):
    """The picker changes the namespace and the form still carries the loom chosen before: the
    new namespace's memory is shown, not a 404 for a loom it does not have."""
    other = f"mem-{uuid.uuid4().hex[:8]}"
    enable_logging(other)
    remember(other, "the other team ships on Fridays")
    side = call("looms.create", OPERATOR, {"namespace": ns, "name": "side project"})["loom"]["id"]
    page = signed_in(create_token([ns, other], "viewer")).get(
        "/ui/memory", params={"namespace": other, "loom_id": side, "loom_of": ns}
    )
    assert page.status_code == 200, page.text
    assert "the other team ships on Fridays" in page.text and side not in page.text
    # The form as the page writes it carries both, so a search within a loom stays in it.
    chosen = signed_in(create_token([ns], "viewer")).get(
        "/ui/memory", params={"namespace": ns, "loom_id": side}
    )
    assert f'name="loom_id" value="{side}"><input type="hidden" name="loom_of" value="{ns}">' in chosen.text
