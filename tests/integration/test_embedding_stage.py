"""The embedding stage under a real Dramatiq worker: batching, fail-open, operator retries,
late vectors for deleted turns, and safety when a run is done twice or its worker dies."""

import re
from datetime import timedelta

import pytest
from freezegun import freeze_time
from sqlmodel import select

from models import db
from models.base import utcnow
from models.conversation import Embedding, Turn
from models.settings import get_settings
from models.stage_run import FAILED, RUNNING, SKIPPED, SUCCEEDED, StageRun
from models.stages import EMBEDDING
from tests.support.calls import append, enable_logging
from tests.support.rows import embedding_subject
from tests.support.waits import settled, wait_until


def run_of(turn_id: int) -> StageRun:
    with db.session() as s:
        return s.exec(select(StageRun).where(StageRun.subject == embedding_subject(turn_id))).one()


def row_of(turn_id: int) -> Embedding:
    with db.session() as s:
        return s.exec(select(Embedding).where(Embedding.turn_id == turn_id)).one()


def test_the_worker_embeds_turns_with_the_local_minilm_model(worker):
    enable_logging("local")
    ids = [
        append("local", "t", text)["turn_id"]
        for text in ("The cat sat on the mat.", "Invoices moved to the ledger.")
    ]
    wait_until(settled, timeout=120, what="the embedding runs")
    for turn_id in ids:
        row, run = row_of(turn_id), run_of(turn_id)
        assert (run.status, run.attempts) == (SUCCEEDED, 1)
        assert row.model == "all-MiniLM-L6-v2" and len(row.vector) == 384
        assert abs(sum(x * x for x in row.vector) - 1) < 1e-3  # normalised


def test_many_pending_turns_are_embedded_in_few_model_calls(worker, openai_embedder):
    enable_logging("batch")
    openai_embedder.mode = "stall"  # hold the first calls so the rest pile up
    ids = [append("batch", "t", f"turn number {i}")["turn_id"] for i in range(40)]
    wait_until(openai_embedder.stalled.is_set, what="a stalled model call")
    openai_embedder.mode = "ok"
    openai_embedder.release.set()
    wait_until(settled, what="the embedding runs")
    assert sum(len(call) for call in openai_embedder.embedding_calls) == 40
    assert len(openai_embedder.embedding_calls) <= 5
    assert all(run_of(i).status == SUCCEEDED for i in ids)


def test_a_failed_embed_keeps_the_turn_records_the_error_and_fails_the_run(worker, openai_embedder):
    from ops.caller import OPERATOR
    from ops.registry import call

    enable_logging("failing")
    openai_embedder.mode = "fail"
    turn_id = append("failing", "t", "a turn the model cannot embed")["turn_id"]
    wait_until(settled, what="the run to fail")
    run, row = run_of(turn_id), row_of(turn_id)
    assert (run.status, run.attempts) == (FAILED, 3) and "model is down" in run.last_error
    assert row.vector is None and "model is down" in row.error
    with db.session() as s:
        assert s.get(Turn, turn_id).content == "a turn the model cannot embed"
    # Found only by the substring fallback while the embedder is down.
    body = {"namespace": "failing", "query": "cannot embed", "search_mode": "semantic"}
    answer = call("conversation.search", OPERATOR, body)
    assert answer["mode"] == "substring" and [h["thread_id"] for h in answer["hits"]] == ["t"]


def wrong_count(error: str) -> bool:
    """One vector more than the texts sent: caught by the embedder's count check."""
    found = re.match(r"EmbedderUnavailable: embedding endpoint answered (\d+) vectors for (\d+) texts", error)
    return bool(found) and int(found[1]) == int(found[2]) + 1


def wrong_dimension(error: str) -> bool:
    """As many vectors as texts, half as wide as asked: caught by the embedder's dimension check."""
    found = re.match(
        r"EmbedderUnavailable: embedding endpoint answered (\d+) vectors for (\d+) texts "
        r"\(want 384 dimensions each\)$",
        error,
    )
    return bool(found) and found[1] == found[2]


def garbage(error: str) -> bool:
    """Not JSON at all: the openai client cannot parse it."""
    return error.startswith("JSONDecodeError: ")


@pytest.mark.parametrize("reads_as", [wrong_count, wrong_dimension, garbage], ids=lambda f: f.__name__)
def test_a_wrong_answer_from_the_model_stores_no_vector_and_fails_the_runs(broker, openai_embedder, reads_as):
    from ops.caller import OPERATOR
    from ops.registry import call
    from workers.runner import new_worker, stop

    mode = reads_as.__name__
    namespace = f"wrong-{mode}"
    enable_logging(namespace)
    openai_embedder.mode = mode
    broker.flush_all()
    # Appended before a worker runs, so the first claim sends the four turns together.
    texts = [f"turn {i} that a {mode} model answered" for i in range(4)]
    ids = [append(namespace, "t", text)["turn_id"] for text in texts]
    worker = new_worker(threads=2)
    worker.start()
    try:
        wait_until(settled, what="the runs to fail")
    finally:
        stop(worker, timeout_ms=10_000)
    attempts = get_settings().stage_max_attempts
    for turn_id in ids:
        run, row = run_of(turn_id), row_of(turn_id)
        assert (run.status, run.attempts) == (FAILED, attempts)
        assert reads_as(run.last_error), run.last_error
        assert row.vector is None and row.model is None and row.embedded_at is None
        assert row.error == run.last_error
    if mode != "garbage":  # garbage answers before the server records the call
        assert sorted(openai_embedder.embedding_calls[0]) == texts  # the checks saw a batch first
        assert {text for call in openai_embedder.embedding_calls for text in call} == set(texts)
    with db.session() as s:
        assert [s.get(Turn, i).content for i in ids] == texts
    # The query cannot be embedded either: the substring fallback finds every turn.
    body = {"namespace": namespace, "query": f"a {mode} model", "search_mode": "semantic"}
    answer = call("conversation.search", OPERATOR, body)
    assert answer["mode"] == "substring" and reads_as(answer["embedder_error"]), answer["embedder_error"]
    assert sorted(h["excerpt"] for h in answer["hits"]) == texts
    assert all(h["similarity"] is None for h in answer["hits"])


def test_an_operator_retry_embeds_a_failed_run_once_and_a_second_retry_is_a_no_op(worker, openai_embedder):
    from workers import ledger, outbox

    enable_logging("retry")
    openai_embedder.mode = "fail"
    turn_id = append("retry", "t", "retry me please")["turn_id"]
    wait_until(settled, what="the run to fail")
    run_id = run_of(turn_id).id
    openai_embedder.mode = "ok"
    openai_embedder.embedding_calls.clear()
    first, second = ledger.retry(run_id), ledger.retry(run_id)
    assert first.requeued and not second.requeued and "already pending" in second.message
    outbox.send(EMBEDDING, [run_id])
    outbox.send(EMBEDDING, [run_id])
    wait_until(settled, what="the retried run")
    assert run_of(turn_id).status == SUCCEEDED
    assert row_of(turn_id).vector is not None and row_of(turn_id).error is None
    assert openai_embedder.embedding_calls == [["retry me please"]]
    again = ledger.retry(run_id)
    assert not again.requeued and "already succeeded" in again.message


def test_a_turn_deleted_while_its_embedding_ran_drops_the_late_vector(worker, openai_embedder):
    enable_logging("deleted")
    openai_embedder.mode = "stall"
    turn_id = append("deleted", "t", "delete me mid-embed")["turn_id"]
    wait_until(openai_embedder.stalled.is_set, what="the model call to start")
    with db.session() as s:
        turn = s.get(Turn, turn_id)
        turn.deleted_at = utcnow()
        s.add(turn)
    openai_embedder.release.set()
    wait_until(settled, what="the run to finish")
    run = run_of(turn_id)
    assert (run.status, run.reason) == (SKIPPED, "deleted")
    assert row_of(turn_id).vector is None


def test_running_the_stage_twice_embeds_once(openai_embedder):
    from workers.stages.embedding import embed_turns

    enable_logging("twice")
    turn_id = append("twice", "t", "only once")["turn_id"]
    run_id = run_of(turn_id).id
    embed_turns([run_id])
    embed_turns([run_id])
    assert run_of(turn_id).status == SUCCEEDED and run_of(turn_id).attempts == 1
    assert len(openai_embedder.embedding_calls) == 1
    with db.session() as s:
        assert len(s.exec(select(Embedding).where(Embedding.turn_id == turn_id)).all()) == 1


def test_a_run_whose_worker_died_is_claimed_again_once_its_lease_expires(openai_embedder):
    from workers import ledger
    from workers.stages.embedding import embed_turns

    enable_logging("lease")
    turn_id = append("lease", "t", "my worker was killed")["turn_id"]
    run_id = run_of(turn_id).id
    assert [r.id for r in ledger.claim("embedding", [run_id], fill=1)] == [run_id]  # ... and the worker dies
    embed_turns([run_id])
    assert run_of(turn_id).status == RUNNING  # still leased: nobody else may take it
    later = utcnow() + timedelta(seconds=get_settings().stage_lease_seconds + 1)
    with freeze_time(later):
        assert run_id in ledger.stale(grace_seconds=60).get("embedding", [])
        embed_turns([run_id])
    run = run_of(turn_id)
    assert (run.status, run.attempts) == (SUCCEEDED, 2)
    assert row_of(turn_id).vector is not None


def queued(broker) -> int:
    """Embedding messages waiting to be fetched by a worker."""
    return broker.client.llen("dramatiq:embedding")


def test_appends_send_one_message_while_one_is_waiting_and_full_batches_wake_the_next(
    broker, openai_embedder, monkeypatch
):
    from workers.runner import new_worker, stop

    monkeypatch.setenv("LOOM_EMBED_BATCH_SIZE", "4")
    get_settings.cache_clear()
    enable_logging("coalesce")
    broker.flush_all()
    ids = [append("coalesce", "t", f"queued turn {i}")["turn_id"] for i in range(10)]
    assert queued(broker) == 1  # the first append's message claims the others too
    worker = new_worker(threads=2)
    worker.start()
    try:
        wait_until(settled, what="the coalesced runs")
    finally:
        stop(worker, timeout_ms=10_000)
    # One message, then each full batch of 4 woke the next: 4 + 4 + 2, every turn once.
    assert sorted(len(call) for call in openai_embedder.embedding_calls) == [2, 4, 4]
    assert all(run_of(i).status == SUCCEEDED for i in ids)
    assert queued(broker) == 0
