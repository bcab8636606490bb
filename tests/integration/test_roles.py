"""The role matrix over HTTP: every role × every op of the registry, and a namespace the token does
not cover, for every op. A refused call is a 403 and writes nothing; an allowed one answers."""

import uuid
from collections.abc import Callable

import pytest
from sqlmodel import select

from models import db
from models.brief import SessionBrief
from models.conversation import Thread, Turn
from models.namespace import ROLES, Namespace, role_rank
from models.settings import get_settings
from models.stage_run import FAILED, StageRun
from ops.caller import OPERATOR
from ops.registry import OPS, call
from tests.support.calls import append, enable_logging

MINE, OTHER = "roles-mine", "roles-other"

# A valid minimal body per op (namespace added by the test), unique per call so a write that should
# not have happened shows. An op added to the registry without one here fails the matrix below.
BODIES: dict[str, Callable[[str], dict]] = {
    "conversation.set_logging": lambda unique: {"enabled": True},
    "conversation.append": lambda unique: {"thread_id": "t", "role": "user", "content": f"said {unique}"},
    "conversation.create": lambda unique: {"thread_id": f"made-{unique}"},
    "conversation.update": lambda unique: {"thread_id": "t", "title": f"renamed {unique}"},
    "conversation.threads": lambda unique: {},
    "conversation.get": lambda unique: {"thread_id": "t"},
    "conversation.list": lambda unique: {"thread_id": "t"},
    "conversation.search": lambda unique: {"query": f"said {unique}"},
    "conversation.compact": lambda unique: {"thread_id": "t", "min_to_compact": 1 + len(unique)},
    # An agent with no copies in "t": the delete is served and leaves the thread to the others.
    "conversation.delete": lambda unique: {"thread_id": "t", "confirm_thread_id": "t", "agent": unique},
    "conversation.ingest": lambda unique: {
        "thread_id": f"ingested-{unique}",
        "transcript": f"# user\n{unique}\n",
    },
    # A tool turn is never saved: answered at once, without waiting for an embedding.
    "conversation.save_message": lambda unique: {
        "conversation_id": "t",
        "message_id": f"m-{unique}",
        "role": "tool",
        "content": unique,
        "user_id": "u",
    },
    "conversation.unsave_message": lambda unique: {
        "conversation_id": "t",
        "message_id": unique,
        "user_id": "u",
    },
    "conversation.search_saved_messages": lambda unique: {"query": unique, "user_id": "u"},
    "conversation.list_saved_messages": lambda unique: {"user_id": unique},
    "conversation.saved_status": lambda unique: {
        "conversation_id": "t",
        "message_ids": [unique],
        "user_id": "u",
    },
    "erasure.request": lambda unique: {"user_id": f"nobody-{unique}"},
    "erasure.export": lambda unique: {"user_id": f"nobody-{unique}"},
    "erasure.list": lambda unique: {"limit": 1},
    "looms.list": lambda unique: {},
    "looms.create": lambda unique: {"name": f"loom-{unique}"},
    "looms.update": lambda unique: {"weaving_mode": "Auto"},
    "looms.sessions": lambda unique: {"agent_name": unique},
    "context.pack": lambda unique: {"thread_id": "t", "run_id": unique},
    "memory.set": lambda unique: {"content": f"remembered {unique}"},
    "memory.search": lambda unique: {"query": unique, "search_mode": "lexical"},
    "memory.pin": lambda unique: {"thread": memory_thread(unique)},
    "memory.cut": lambda unique: {"thread": memory_thread(unique)},
    "memory.reframe": lambda unique: {"thread": memory_thread(unique), "content": f"said anew {unique}"},
    "memory.inspect": lambda unique: {"limit": 1},
    "memory.set_from_messages": lambda unique: {
        "thread_id": "t",
        "messages": [{"role": "user", "content": f"I moved to Porto {unique}"}],
    },
    "memory.recall": lambda unique: {"query": unique},
    "memory.suggest": lambda unique: {"thread_id": "t", "said": f"what about {unique}"},
    "memory.session_record": lambda unique: {"thread_id": "t", "held": [memory_thread(unique)]},
    "memory.give": lambda unique: {"thread": memory_thread(unique), "thread_id": "t", "to_agent": unique},
    "session.brief_save": lambda unique: {"brief_key": unique, "sections": {"goal": f"goal {unique}"}},
    "session.brief_get": lambda unique: {"brief_key": a_brief(unique)},
    "session.brief_list": lambda unique: {"limit": 1},
    "session.brief_delete": lambda unique: {"brief_key": unique},
    "working_memory.set": lambda unique: {"project": unique, "content": f"where was I {unique}"},
    "working_memory.get": lambda unique: {"project": a_block(unique)},
    "working_memory.list": lambda unique: {"limit": 1},
    "observe.record": lambda unique: {
        "session_id": unique,
        "actions": [{"tool": "Bash", "input_sha256": "0" * 64, "summary": f"echo {unique}"}],
    },
    "observe.crystallize": lambda unique: {"session_id": unique},
    "namespaces.list": lambda unique: {},
    "runs.list": lambda unique: {"limit": 1},
    "runs.get": lambda unique: {"run_id": a_failed_run(unique)},
    "runs.retry": lambda unique: {"run_id": a_failed_run(unique)},
    "runs.retry_stage": lambda unique: {"stage": "retention", "status": "failed"},  # none failed here
    "passes.list": lambda unique: {},
    "passes.run": lambda unique: {"name": "titler"},
    "night_weaving.list": lambda unique: {},
    "health.get": lambda unique: {},
    "cursors.rotate_key": lambda unique: {},
}
# Ops that name no namespace: the operator's (served to a token for every namespace) and the list
# of the caller's namespaces.
UNNAMESPACED = {name for name, op in OPS.items() if op.all_namespaces} | {"namespaces.list"}


def a_brief(unique: str) -> str:
    """A brief of MINE to read (a token of OTHER is refused before it is looked up)."""
    body = {"namespace": MINE, "brief_key": f"brief-{unique}", "sections": {"goal": "to read"}}
    return call("session.brief_save", OPERATOR, body)["brief_key"]


def a_block(unique: str) -> str:
    """A working memory block of MINE to read, by its project."""
    body = {"namespace": MINE, "project": f"block-{unique}", "content": "to read"}
    return call("working_memory.set", OPERATOR, body)["project"]


def a_failed_run(unique: str) -> int:
    with db.session() as s:
        run = StageRun(stage="embedding", subject=f"turn:{unique}", idem_key=f"roles:{unique}", status=FAILED)
        s.add(run)
        s.flush()
        return run.id


def memory_thread(unique: str) -> str:
    """A memory thread of MINE's default loom to pin, cut or reframe (a token of OTHER is refused
    before it is looked up)."""
    return call("memory.set", OPERATOR, {"namespace": MINE, "content": f"a thread {unique}"})["thread"]["id"]


@pytest.fixture(scope="module", autouse=True)
def model_configured(fake_openai):
    """conversation.compact is served only where an LLM provider is configured."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOOM_LLM_PROVIDER", "openai")
        patch.setenv("LOOM_LLM_BASE_URL", fake_openai.base_url)
        get_settings.cache_clear()
        yield
    get_settings.cache_clear()


@pytest.fixture(scope="module", autouse=True)
def namespaces():
    """Both namespaces record and hold a thread "t", so only the token can make a call fail."""
    for namespace in (MINE, OTHER):
        enable_logging(namespace)
        append(namespace, "t", "a turn to read")


def body_for(op: str, namespace: str) -> dict:
    if op not in BODIES:
        pytest.fail(f"{op} is in ops.registry.OPS but has no minimal body in test_roles.BODIES")
    body = BODIES[op](uuid.uuid4().hex[:12])
    return body if op in UNNAMESPACED else {"namespace": namespace, **body}


def state() -> tuple:
    """Everything an op could write: turns, threads as they are, the recording switches, briefs."""
    with db.session() as s:
        turns = s.exec(select(Turn.id).order_by(Turn.id)).all()
        threads = [
            (t.namespace, t.thread_id, t.title, t.meta, t.run_id, t.turn_count, t.last_turn_at)
            for t in s.exec(select(Thread).order_by(Thread.id))
        ]
        switches = [
            (n.name, n.conversation_logging_enabled, n.updated_at)
            for n in s.exec(select(Namespace).order_by(Namespace.name))
        ]
        kept = s.exec(select(SessionBrief.id, SessionBrief.revision).order_by(SessionBrief.id)).all()
    return turns, threads, switches, kept


def test_every_op_of_the_registry_has_a_minimal_body_and_nothing_else_does():
    assert set(BODIES) == set(OPS)


MATRIX = [(op, role) for op in OPS for role in ROLES]


@pytest.mark.parametrize(("op", "role"), MATRIX, ids=[f"{op}-{role}" for op, role in MATRIX])
def test_a_role_below_the_ops_is_403_and_writes_nothing_and_one_at_or_above_it_is_served(
    client, make_token, op, role
):
    body = body_for(op, MINE)  # first: a body may write what it refers to
    before = state()
    token = (
        make_token(role=role, all_namespaces=True) if OPS[op].all_namespaces else make_token(MINE, role=role)
    )
    answer = client.post(f"/v1/{op}", json=body, headers=token)
    if role_rank(role) < role_rank(OPS[op].role):
        assert answer.status_code == 403, answer.text
        assert f"needs the {OPS[op].role} role" in answer.json()["error"]
        assert state() == before
    else:
        assert answer.status_code == 200, answer.text
        served = answer.json()
        if op == "namespaces.list":
            assert [n["name"] for n in served["namespaces"]] == [MINE]
        elif op not in UNNAMESPACED:
            assert served.get("namespace") == MINE or served.get("namespaces") == [MINE]


OPERATOR_MATRIX = [(op, role) for op, role in MATRIX if OPS[op].all_namespaces]


@pytest.mark.parametrize(
    ("op", "role"), OPERATOR_MATRIX, ids=[f"{op}-{role}" for op, role in OPERATOR_MATRIX]
)
def test_an_operator_op_is_403_to_a_token_of_some_namespaces_whatever_its_role(client, make_token, op, role):
    before = state()
    answer = client.post(f"/v1/{op}", json=body_for(op, MINE), headers=make_token(MINE, role=role))
    assert answer.status_code == 403, answer.text
    assert "every namespace" in answer.json()["error"] or "role" in answer.json()["error"]
    assert state() == before


NAMED_MATRIX = [(op, role) for op, role in MATRIX if op not in UNNAMESPACED]


@pytest.mark.parametrize(("op", "role"), NAMED_MATRIX, ids=[f"{op}-{role}" for op, role in NAMED_MATRIX])
def test_a_namespace_the_token_does_not_cover_is_403_for_every_op_and_writes_nothing(
    client, make_token, op, role
):
    body = body_for(op, OTHER)
    before = state()
    answer = client.post(f"/v1/{op}", json=body, headers=make_token(MINE, role=role))
    assert answer.status_code == 403, answer.text
    if role_rank(role) >= role_rank(OPS[op].role):
        assert repr(OTHER) in answer.json()["error"] and "namespace" in answer.json()["error"]
    assert state() == before
