"""Working memory: the "where was I" block by namespace, user, project and branch, through the ops
as every client calls them."""

import threading
import uuid

import pytest
from sqlmodel import select

from models import db
from models.working_memory import WorkingMemory, WorkingMemoryRevision
from ops.caller import OPERATOR, authenticate, create_token
from ops.errors import OpError
from ops.registry import call
from tests.support.calls import enable_logging

SECRET = "resume with the deploy key sk-proj-AbCdEf1234567890GhIjKlMnOpQrStUvWxYz12 on OPS-7731"


@pytest.fixture
def ns(database) -> str:
    return f"wm-{uuid.uuid4().hex[:8]}"


def op(ns: str, name: str, caller=OPERATOR, **body) -> dict:
    return call(name, caller, {"namespace": ns, **body})


def refused(ns: str, name: str, caller=OPERATOR, **body) -> OpError:
    with pytest.raises(OpError) as caught:
        op(ns, name, caller, **body)
    return caught.value


def test_a_block_is_written_whole_and_a_repeated_write_adds_no_revision(ns):
    first = op(ns, "working_memory.set", project="billing", branch="ledger", content="step 1 of 3")
    assert first["changed"] and first["revision"] == 1
    again = op(ns, "working_memory.set", project="billing", branch="ledger", content="step 1 of 3")
    assert not again["changed"] and again["revision"] == 1
    op(ns, "working_memory.set", project="billing", branch="ledger", content="step 2 of 3", session_id="s-2")
    now = op(ns, "working_memory.get", project="billing", branch="ledger")
    assert (now["content"], now["revision"], now["session_id"]) == ("step 2 of 3", 2, "s-2")
    kept = op(ns, "working_memory.get", project="billing", branch="ledger", revision=1)
    assert (kept["content"], kept["revision"]) == ("step 1 of 3", 1)
    assert refused(ns, "working_memory.get", project="billing", branch="ledger", revision=3).status == 404


def test_each_user_project_and_branch_has_its_own_block_and_the_list_names_them_without_content(ns):
    op(ns, "working_memory.set", project="billing", branch="main", content="team note")
    op(ns, "working_memory.set", project="billing", branch="main", user_id="ana", content="ana's note")
    op(ns, "working_memory.set", project="search", content="other project")
    assert op(ns, "working_memory.get", project="billing", branch="main")["content"] == "team note"
    assert (
        op(ns, "working_memory.get", project="billing", branch="main", user_id="ana")["content"]
        == "ana's note"
    )
    assert refused(ns, "working_memory.get", project="billing", branch="other").status == 404
    listed = op(ns, "working_memory.list", project="billing")["blocks"]
    assert sorted((b["user_id"], b["branch"], b["chars"]) for b in listed) == [
        ("", "main", len("team note")),
        ("ana", "main", len("ana's note")),
    ]
    assert all("content" not in b for b in listed)
    assert [b["user_id"] for b in op(ns, "working_memory.list", user_id="ana")["blocks"]] == ["ana"]


@pytest.mark.parametrize(
    "body",
    [
        {"content": "x" * 4_001},
        {"content": "ok", "project": "p" * 129},
        {"content": "ok", "branch": "bad\nbranch"},
        {"content": "ok", "if_revision": -1},
        {"content": "ok", "user_id": ""},
    ],
)
def test_a_block_out_of_bounds_is_refused_and_the_stored_one_kept(ns, body):
    op(ns, "working_memory.set", content="kept")
    assert refused(ns, "working_memory.set", **body).status == 422
    assert op(ns, "working_memory.get")["content"] == "kept"


def test_if_revision_makes_a_write_compare_and_set(ns):
    assert op(ns, "working_memory.set", content="first", if_revision=0)["revision"] == 1
    conflict = refused(ns, "working_memory.set", content="late", if_revision=0)
    assert conflict.status == 409 and "revision 1" in conflict.reason
    assert op(ns, "working_memory.set", content="second", if_revision=1)["revision"] == 2
    assert op(ns, "working_memory.get")["content"] == "second"


def test_a_block_that_reads_as_high_is_kept_but_read_back_withheld_and_never_searched(ns, worker):
    enable_logging(ns)
    stored = op(ns, "working_memory.set", project="ops", content=SECRET)
    assert stored["withheld"] and stored["content"] == ""
    read = op(ns, "working_memory.get", project="ops")
    assert read["withheld"] and read["content"] == "" and read["revision"] == 1
    with db.session() as s:  # stored whole: nothing the person wrote is lost
        kept = s.exec(
            select(WorkingMemoryRevision.content).where(WorkingMemoryRevision.content == SECRET)
        ).all()
        assert kept == [SECRET]
    op(ns, "working_memory.set", project="ops", content="zanzibar quokka rollout")
    assert not op(ns, "working_memory.get", project="ops")["withheld"]
    assert not op(ns, "conversation.search", query="zanzibar quokka rollout")["hits"]
    assert not op(ns, "memory.search", query="zanzibar quokka rollout")["hits"]


def test_a_token_bounded_to_a_user_has_that_users_blocks_only(ns):
    ana = authenticate(f"Bearer {create_token([ns], 'writer', 'own_user', read_user_id='ana')}")
    op(ns, "working_memory.set", caller=ana, project="p", content="ana's")
    op(ns, "working_memory.set", project="p", content="the team's")
    assert op(ns, "working_memory.get", caller=ana, project="p")["content"] == "ana's"
    assert op(ns, "working_memory.get", project="p", user_id="ana")["content"] == "ana's"
    assert [b["user_id"] for b in op(ns, "working_memory.list", caller=ana)["blocks"]] == ["ana"]
    assert refused(ns, "working_memory.get", caller=ana, project="p", user_id="bo").status == 403
    session = authenticate(f"Bearer {create_token([ns], 'writer', 'own_session', read_session_id='s-1')}")
    assert refused(ns, "working_memory.get", caller=session, project="p").status == 403
    reader = authenticate(f"Bearer {create_token([ns], 'viewer')}")
    assert refused(ns, "working_memory.set", caller=reader, content="no").status == 403


def test_concurrent_writes_of_one_block_each_get_their_own_revision(ns):
    def write(i: int) -> None:
        op(ns, "working_memory.set", project="p", content=f"write {i}")

    threads = [threading.Thread(target=write, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert op(ns, "working_memory.get", project="p")["revision"] == 8
    kept = {op(ns, "working_memory.get", project="p", revision=r)["content"] for r in range(1, 9)}
    assert kept == {f"write {i}" for i in range(8)}


def test_erasure_takes_a_persons_blocks_and_a_namespaces_all(ns, worker):
    op(ns, "working_memory.set", user_id="ana", content="ana's")
    op(ns, "working_memory.set", user_id="ana", content="ana's, revised")
    op(ns, "working_memory.set", content="the team's")
    with db.session() as s:
        (block_id,) = s.exec(
            select(WorkingMemory.id).where(WorkingMemory.namespace == ns, WorkingMemory.user_id == "ana")
        ).all()
    by_user = call("erasure.request", OPERATOR, {"namespace": ns, "user_id": "ana", "wait": True})["run"]
    assert by_user["result"] == {"working_memory": 1}, by_user
    assert refused(ns, "working_memory.get", user_id="ana").status == 404
    with db.session() as s:  # the revisions went with the block
        assert not s.exec(
            select(WorkingMemoryRevision).where(WorkingMemoryRevision.block_id == block_id)
        ).all()
    whole = call("erasure.request", OPERATOR, {"namespaces": [ns], "wait": True})["run"]
    assert whole["result"]["working_memory"] == 1 and not op(ns, "working_memory.list")["blocks"]


def test_context_pack_for_a_user_and_session_brings_the_users_block_and_names_the_user_first(ns):
    op(
        ns,
        "working_memory.set",
        user_id="u1",
        project="billing",
        branch="ledger",
        content="halfway: export job",
    )
    op(ns, "working_memory.set", user_id="u2", project="billing", branch="ledger", content="not u1's")
    pack = op(ns, "context.pack", thread_id="thread-42", user_id="u1", project="billing", branch="ledger")
    assert pack["working_memory"]["content"] == "halfway: export job"
    assert pack["working_memory"]["user_id"] == "u1"
    assert pack["session"]["subjects"][0] == "u1"
    assert op(ns, "context.pack", thread_id="thread-43")["working_memory"] is None
