"""The operator ops over HTTP (``ops.namespaces``, ``ops.runs``, ``ops.passes``): namespaces with
their Record switch, the ledger, the passes and the night weavings; served to a token for every
namespace, acted on by an admin."""

import uuid

import pytest
from sqlalchemy import text
from sqlmodel import col, select

from models import db
from models.pass_run import PassRun
from models.stage_run import FAILED, PENDING, SKIPPED, SUCCEEDED, StageRun
from models.stages import Stage
from ops.caller import OPERATOR, create_token
from ops.errors import OpError
from ops.registry import call
from tests.support.calls import append, enable_logging
from tests.support.rows import embedding_subject
from tests.support.waits import wait_until
from workers import stages


def post(client, op: str, headers: dict, body: dict | None = None):
    return client.post(f"/v1/{op}", json=body or {}, headers=headers)


@pytest.fixture
def names() -> tuple[str, str]:
    unique = uuid.uuid4().hex[:8]
    return f"ops-a-{unique}", f"ops-b-{unique}"


def test_namespaces_are_the_tokens_own_with_their_switch_threads_and_last_turn(client, make_token, names):
    mine, other = names
    enable_logging(mine)
    append(mine, "t1", "one")
    append(mine, "t2", "two")
    enable_logging(other)
    append(other, "t", "elsewhere")  # another namespace: never in a token of mine's list
    listed = post(client, "namespaces.list", make_token(mine, role="viewer")).json()["namespaces"]
    assert [(n["name"], n["conversation_logging_enabled"], n["threads"]) for n in listed] == [(mine, True, 2)]
    assert listed[0]["last_turn_at"] is not None
    everything = post(client, "namespaces.list", make_token(role="viewer", all_namespaces=True)).json()
    assert {mine, other} <= {n["name"] for n in everything["namespaces"]}


def test_a_namespace_holding_only_briefs_or_memory_is_listed_for_every_namespace(client, make_token, names):
    """The dashboard's namespace picker lists what namespaces.list answers: a namespace that never
    recorded a turn but keeps briefs, a memory thread or a loom made by name is one to choose."""
    briefs_only, loom_only = names
    memory_only = f"ops-{uuid.uuid4().hex[:8]}"
    brief = {"namespace": briefs_only, "user_id": "u", "brief_key": "b", "project": "p"}
    call("session.brief_save", OPERATOR, brief | {"sections": {"decisions": ["ship on Friday"]}})
    call("looms.create", OPERATOR, {"namespace": loom_only, "name": "research"})
    call("memory.set", OPERATOR, {"namespace": memory_only, "thread_id": "t", "content": "ship on Friday"})
    every = make_token(role="viewer", all_namespaces=True)
    listed = post(client, "namespaces.list", every).json()["namespaces"]
    shown = {n["name"]: (n["conversation_logging_enabled"], n["threads"]) for n in listed}
    assert shown[briefs_only] == shown[loom_only] == shown[memory_only] == (False, 0)


def test_a_namespace_only_read_is_not_listed(client, make_token):
    """A first read of memory makes the namespace's default loom: a mistyped name read once must
    not be offered forever."""
    typo = f"ops-{uuid.uuid4().hex[:8]}"
    call("memory.search", OPERATOR, {"namespace": typo, "query": "release dates"})
    every = make_token(role="viewer", all_namespaces=True)
    listed = post(client, "namespaces.list", every).json()["namespaces"]
    assert typo not in {n["name"] for n in listed}


def test_a_failed_run_is_listed_shown_and_retried_by_an_admin_to_success(client, make_token, names, worker):
    namespace = names[0]
    enable_logging(namespace)
    turn_id = append(namespace, "t", "a turn whose first run failed")["turn_id"]
    wait_until(lambda: run_of(turn_id).status == SUCCEEDED, what="the first run")
    with db.session() as s:
        run = s.get(StageRun, run_of(turn_id).id)
        run.status, run.last_error, run.attempts = FAILED, "EmbedderUnavailable: down", 3
        s.add(run)
    viewer = make_token(role="viewer", all_namespaces=True)
    listed = post(client, "runs.list", viewer, {"status": "failed", "stage": "embedding"}).json()
    assert run.id in [r["id"] for r in listed["runs"]] and listed["counts"]["embedding"]["failed"] >= 1
    shown = post(client, "runs.get", viewer, {"run_id": run.id}).json()["run"]
    assert (shown["status"], shown["last_error"], shown["subject"]) == (
        FAILED,
        "EmbedderUnavailable: down",
        run.subject,
    )
    refused = post(client, "runs.retry", viewer, {"run_id": run.id})
    assert refused.status_code == 403 and run_of(turn_id).status == FAILED
    admin = make_token(role="admin", all_namespaces=True)
    retried = post(client, "runs.retry", admin, {"run_id": run.id}).json()
    assert retried["requeued"] and "queued again" in retried["message"]
    wait_until(lambda: run_of(turn_id).status == SUCCEEDED, what="the retried run")
    again = post(client, "runs.retry", admin, {"run_id": run.id}).json()
    assert not again["requeued"] and "already succeeded" in again["message"]
    assert post(client, "runs.get", viewer, {"run_id": 2**62}).status_code == 404


def run_of(turn_id: int) -> StageRun:
    with db.session() as s:
        return s.exec(select(StageRun).where(StageRun.subject == embedding_subject(turn_id))).one()


@pytest.fixture
def failed_only_stage(broker):
    """A stage of the test's own that retries failed runs only (every real stage retries both)."""

    def retried(run_ids: list[int]) -> None:  # its actor's work: no worker runs in this test
        pass

    yield stages.register(Stage("t_retried", "retried", subject_kind="retried", retryable=(FAILED,)), retried)
    stages._registered.pop("t_retried")  # later tests see only the real stages


def runs_of(stage: str, status: str, n: int) -> list[int]:
    with db.session() as s:
        return list(
            s.exec(
                text(
                    "INSERT INTO stage_runs (stage, subject, idem_key, status, attempts, created_at, "
                    "updated_at, available_at) SELECT :stage, 'retried:' || g, 'retried:' || :status || g, "
                    ":status, 3, now(), now(), now() FROM generate_series(1, :n) g RETURNING id"
                ),
                params={"stage": stage, "status": status, "n": n},
            ).scalars()
        )


def statuses(ids: list[int]) -> set[str]:
    with db.session() as s:
        return set(s.exec(select(StageRun.status).where(col(StageRun.id).in_(ids))))


def test_every_failed_run_of_a_stage_is_retried_by_an_admin_and_a_status_it_keeps_is_refused(
    client, make_token, failed_only_stage
):
    stage = failed_only_stage.name
    failed, skipped = runs_of(stage, FAILED, 3), runs_of(stage, SKIPPED, 2)
    viewer, admin = (make_token(role=role, all_namespaces=True) for role in ("viewer", "admin"))
    for refused in (viewer, make_token("ops-a", role="admin")):  # not an admin, not of every namespace
        assert post(client, "runs.retry_stage", refused, {"stage": stage}).status_code == 403
    kept = post(client, "runs.retry_stage", admin, {"stage": stage, "status": SKIPPED})
    assert kept.status_code == 422 and kept.json()["field"] == "status"
    assert kept.json()["error"] == f"the {stage} stage does not retry skipped runs"
    assert statuses(failed) == {FAILED} and statuses(skipped) == {SKIPPED}
    retried = post(client, "runs.retry_stage", admin, {"stage": stage})  # failed, unless said otherwise
    assert retried.status_code == 200
    assert retried.json() == {
        "stage": stage,
        "status": FAILED,
        "requeued": 3,
        "message": f"3 {stage} runs queued again",
    }
    assert statuses(failed) == {PENDING} and statuses(skipped) == {SKIPPED}
    unknown = post(client, "runs.retry_stage", admin, {"stage": "nope"})
    assert unknown.status_code == 422 and unknown.json()["field"] == "stage"
    assert "stage must be one of" in unknown.json()["error"] and "embedding" in unknown.json()["error"]


def test_passes_are_listed_and_one_is_fired_by_an_admin(client, make_token):
    viewer, admin = (make_token(role=role, all_namespaces=True) for role in ("viewer", "admin"))
    passes = {p["name"]: p for p in post(client, "passes.list", viewer).json()["passes"]}
    assert {"sweep", "titler", "retention", "night_weaving"} <= set(passes)
    assert post(client, "passes.run", viewer, {"name": "sweep"}).status_code == 403
    fired = post(client, "passes.run", admin, {"name": "sweep"})
    assert fired.status_code == 200 and fired.json()["name"] == "sweep"
    with db.session() as s:
        assert s.get(PassRun, "sweep").by == "operator"
    after = {p["name"]: p for p in post(client, "passes.list", viewer).json()["passes"]}
    assert after["sweep"]["by"] == "operator" and after["sweep"]["finished_at"] is not None
    unknown = post(client, "passes.run", admin, {"name": "everything"})
    assert unknown.status_code == 422 and unknown.json()["field"] == "name"


def test_night_weavings_are_listed_newest_first(client, make_token):
    from datetime import timedelta

    from models.base import utcnow
    from models.memory import NightWeaving

    now, ids = utcnow(), [uuid.uuid4() for _ in range(3)]
    with db.session() as s:
        for back, night in enumerate(ids):  # ids[0] the newest
            started = now + timedelta(days=1) - timedelta(hours=back)
            s.add(NightWeaving(id=night, started_at=started, sessions=2, judged=3, used=back, by="operator"))
    viewer = make_token(role="viewer", all_namespaces=True)
    answer = post(client, "night_weaving.list", viewer, {"limit": 2})
    assert answer.status_code == 200
    nights = answer.json()["nights"]
    assert [(n["id"], n["used"], n["judged"]) for n in nights] == [(str(ids[0]), 0, 3), (str(ids[1]), 1, 3)]
    assert post(client, "night_weaving.list", viewer, {"limit": 0}).status_code == 422


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"namespaces": ["a"], "all_namespaces": True}, "names no --namespace"),
        ({"namespaces": [], "all_namespaces": True, "read_scope": "own_user"}, "namespace read scope"),
        ({"namespaces": []}, "at least one namespace"),
    ],
)
def test_an_all_namespaces_token_is_minted_alone(database, args, problem):
    with pytest.raises(OpError) as refused:
        create_token(role="viewer", **args)
    assert problem in refused.value.reason


def test_a_pass_fires_once_at_a_time_across_processes(client, make_token, database):
    """While another process fires the pass (its lock held on another connection), Run now is a
    409 and changes no record; once that firing ends, it runs."""
    import psycopg

    from schedules.record import PASS_LOCK_CLASS

    admin = make_token(role="admin", all_namespaces=True)
    with psycopg.connect(database.replace("+psycopg", ""), autocommit=True) as other:
        other.execute("SELECT pg_advisory_lock(%s, hashtext('titler'))", (PASS_LOCK_CLASS,))
        with db.session() as s:
            before = s.get(PassRun, "titler")
            before = before and before.started_at
        busy = post(client, "passes.run", admin, {"name": "titler"})
        assert busy.status_code == 409 and "running now" in busy.json()["error"]
        with db.session() as s:
            now = s.get(PassRun, "titler")
            assert (now and now.started_at) == before
        # That firing ends (unlocked before the connection closes: a closed connection's backend
        # may hold the lock a moment longer).
        other.execute("SELECT pg_advisory_unlock(%s, hashtext('titler'))", (PASS_LOCK_CLASS,))
    assert post(client, "passes.run", admin, {"name": "titler"}).status_code == 200
