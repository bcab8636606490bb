"""Saved messages: conversation.save_message, unsave_message, search_saved_messages,
list_saved_messages and saved_status, on the real database with a real embedding worker."""

import json
import math
import threading
import uuid
from collections.abc import Callable
from functools import partial

import pytest
from sqlalchemy import text

from models import db
from models.base import utcnow
from ops.caller import OPERATOR, Caller
from ops.errors import OpError
from ops.registry import call
from pipelines import embedding, saving
from tests.support.calls import append, enable_logging
from tests.support.waits import wait_until

WRITER = Caller(role="writer", namespaces=("saves", "quiet"))
SECRET = "my card is 4111 1111 1111 1111, exp 12/29"


def _thread() -> str:
    return f"chat-{uuid.uuid4().hex[:8]}"


def save(thread: str, msg: str, user: str = "ana", namespace: str = "quiet", **body) -> dict:
    return call(
        "conversation.save_message",
        WRITER,
        {"namespace": namespace, "conversation_id": thread, "message_id": msg, "user_id": user, **body},
    )


def unsave(thread: str, msg: str, user: str = "ana", namespace: str = "quiet") -> dict:
    return call(
        "conversation.unsave_message",
        WRITER,
        {"namespace": namespace, "conversation_id": thread, "message_id": msg, "user_id": user},
    )


def search_saved(query: str, user: str = "ana", namespace: str = "quiet", **body) -> dict:
    return call(
        "conversation.search_saved_messages",
        WRITER,
        {"namespace": namespace, "user_id": user, "query": query, **body},
    )


def _found(answer: dict) -> list[tuple[str, str]]:
    return [(h["conversation_id"], h["message_id"]) for h in answer["hits"]]


def rows(sql: str, **params) -> list:
    with db.session() as s:
        return s.execute(text(sql), params).all()


def at_once(*calls: Callable[[], dict]) -> list[dict]:
    """Each call's answer, the calls started together on threads of their own."""
    barrier, answers = threading.Barrier(len(calls)), [{} for _ in calls]

    def run(i: int) -> None:
        barrier.wait()
        answers[i] = calls[i]()

    racers = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for r in racers:
        r.start()
    for r in racers:
        r.join()
    return answers


def recording(namespace: str) -> bool:
    found = rows("SELECT conversation_logging_enabled FROM namespaces WHERE name = :n", n=namespace)
    return bool(found and found[0][0])


@pytest.fixture(autouse=True)
def switches(database):
    enable_logging("saves")  # records transcripts
    enable_logging("quiet", enabled=False)  # does not


def test_a_save_stores_and_indexes_a_message_where_nothing_is_recorded(worker):
    thread = _thread()
    answer = save(thread, "m1", role="assistant", content="The staging database is pg-stage-04 in eu-west.")
    assert answer["saved"] and answer["stored"] and answer["indexed"] and answer["reason"] is None
    assert not recording("quiet")  # saving does not turn recording on
    [(saved, saved_at, user, only)] = rows(
        "SELECT is_saved, saved_at, user_id, stored_by_save FROM turns WHERE thread_id = :t", t=thread
    )
    assert saved and saved_at is not None and user == "ana" and only
    [(row_saved, vector)] = rows(
        "SELECT is_saved, vector IS NOT NULL FROM embeddings WHERE thread_id = :t", t=thread
    )
    assert row_saved and vector
    assert _found(search_saved("which staging database"))[0] == (thread, "m1")
    # An ordinary append there is still refused: only the save was kept.
    assert append("quiet", thread, "and this is not kept")["reason"] == "logging_disabled"


def test_a_recorded_message_is_flagged_in_place(worker):
    thread = _thread()
    append(
        "saves",
        thread,
        "Deploys go out on Tuesdays after the freeze.",
        role="assistant",
        msg_id="a1",
        run_id="r9",
    )
    answer = save(thread, "a1", namespace="saves", content="a different text the save must not write")
    assert answer["saved"] and not answer["stored"] and answer["indexed"]
    [(content, run_id, saved, user)] = rows(
        "SELECT content, run_id, is_saved, user_id FROM turns WHERE thread_id = :t", t=thread
    )
    assert (content, run_id, saved, user) == (
        "Deploys go out on Tuesdays after the freeze.",
        "r9",
        True,
        "ana",
    )
    again = save(thread, "a1", namespace="saves")
    assert again["saved"] and again["saved_at"] == answer["saved_at"]  # the first save's time stays


def test_a_message_the_save_stores_is_found_by_its_run(worker):
    thread = _thread()
    answer = save(
        thread, "n1", namespace="saves", role="assistant", content="the canary runs in zone c", run_id="run-7"
    )
    assert answer["stored"] and answer["indexed"]
    for mode in ("semantic", "lexical"):
        found = call(
            "conversation.search",
            WRITER,
            {
                "namespace": "saves",
                "namespace_scope": "namespace",
                "query": "canary zone",
                "run_id": "run-7",
                "search_mode": mode,
            },
        )
        assert [(h["thread_id"], h["msg_id"]) for h in found["hits"]] == [(thread, "n1")], mode


def test_a_new_message_from_a_month_no_partition_holds_yet_is_stored(worker):
    thread = _thread()
    said = "1987-05-06T07:08:09+00:00"  # no other test writes in 1987
    answer = save(thread, "old", role="user", content="the lighthouse keeper retired in spring", ts=said)
    assert answer["saved"] and answer["stored"] and answer["indexed"]
    listed = call(
        "conversation.list_saved_messages",
        WRITER,
        {"namespace": "quiet", "user_id": "ana", "conversation_id": thread},
    )
    assert [(m["message_id"], m["said_at"]) for m in listed["messages"]] == [("old", said)]


def test_a_new_message_said_before_the_retention_cutoff_is_not_stored(worker, loom_env):
    loom_env(LOOM_RETENTION_CONVERSATIONS_DAYS="30")
    thread = _thread()
    answer = save(thread, "gone", role="user", content="an expired remark", ts="2001-01-01T00:00:00Z")
    assert (answer["saved"], answer["reason"]) == (False, "expired")
    assert not rows("SELECT 1 FROM turns WHERE thread_id = :t", t=thread)
    assert save(thread, "fresh", role="user", content="a remark from today")["saved"]


def test_refusals_name_their_reason_and_keep_nothing(worker):
    thread = _thread()
    append("saves", thread, "Bea's own note", msg_id="b1", user_id="bea")
    append("saves", thread, "a system note", role="system", msg_id="s1")
    append("saves", thread, SECRET, msg_id="h1")
    assert save(thread, "b1", namespace="saves")["reason"] == "owner_mismatch"
    assert save(thread, "s1", namespace="saves")["reason"] == "unsupported_role"
    assert save(thread, "h1", namespace="saves")["reason"] == "high_sensitivity"
    assert save(thread, "n1", role="tool", content="tool output")["reason"] == "unsupported_role"
    assert save(thread, "n2", role="user", content=SECRET)["reason"] == "high_sensitivity"
    assert not rows("SELECT 1 FROM turns WHERE namespace = 'quiet' AND thread_id = :t", t=thread)
    assert not rows("SELECT 1 FROM turns WHERE thread_id = :t AND is_saved", t=thread)
    call(
        "conversation.delete",
        OPERATOR,
        {"namespace": "saves", "thread_id": thread, "confirm_thread_id": thread},
    )
    assert save(thread, "b1", namespace="saves", user="bea")["reason"] == "deleted"
    with pytest.raises(OpError) as refused:
        save(_thread(), "nothing-here")
    assert refused.value.status == 404


def test_a_stored_message_that_reads_as_high_now_is_refused(worker):
    thread = _thread()
    append("saves", thread, "a harmless line", msg_id="e1")
    with db.session() as s:  # as an earlier build, whose rules missed this shape, stored it
        s.execute(
            text("UPDATE turns SET content = :secret, sensitivity = 'none' WHERE thread_id = :t"),
            {"secret": SECRET, "t": thread},
        )
        s.commit()
    assert save(thread, "e1", namespace="saves")["reason"] == "high_sensitivity"
    assert not rows("SELECT 1 FROM turns WHERE thread_id = :t AND is_saved", t=thread)


def test_two_concurrent_saves_of_a_new_message_store_one_row(worker):
    thread = _thread()
    answers = at_once(
        *[lambda: save(thread, "m", role="user", content="remember the blue door code changed")] * 4
    )
    assert all(a["saved"] for a in answers) and sum(a["stored"] for a in answers) == 1
    assert len(rows("SELECT 1 FROM turns WHERE thread_id = :t", t=thread)) == 1
    assert len(rows("SELECT 1 FROM embeddings WHERE thread_id = :t AND deleted_at IS NULL", t=thread)) == 1


def test_saves_of_one_new_message_through_two_agents_at_once_store_one_row(worker):
    """The message's identity is its thread and msg_id, not the agent that saves it: of two saves
    at once in a new thread, by one user or by two, one stores it."""
    for attempt, (first, second) in enumerate([("ana", "ana"), ("ana", "bo")] * 3):
        thread = _thread()
        answers = at_once(
            partial(save, thread, "m", user=first, agent="planner", role="user", content="the gate code"),
            partial(save, thread, "m", user=second, agent="coder", role="user", content="the gate code"),
        )
        assert sum(a.get("stored", False) for a in answers) == 1, attempt
        assert len(rows("SELECT 1 FROM turns WHERE thread_id = :t", t=thread)) == 1, attempt
        if first != second:
            assert sorted(a["reason"] or "" for a in answers) == ["", "owner_mismatch"], attempt


def test_of_two_users_saving_one_unowned_message_the_first_claims_it(worker):
    thread = _thread()
    append("saves", thread, "an unowned message both users like", msg_id="u1")
    answers: dict[str, dict] = {}
    barrier = threading.Barrier(2)

    def one(user: str) -> None:
        barrier.wait()
        answers[user] = save(thread, "u1", user=user, namespace="saves")

    racers = [threading.Thread(target=one, args=(u,)) for u in ("ana", "bea")]
    for r in racers:
        r.start()
    for r in racers:
        r.join()
    winners = [u for u, a in answers.items() if a["saved"]]
    assert len(winners) == 1
    loser = "bea" if winners == ["ana"] else "ana"
    assert answers[loser]["reason"] == "owner_mismatch"
    assert rows("SELECT user_id FROM turns WHERE thread_id = :t", t=thread) == [(winners[0],)]
    assert rows("SELECT user_id FROM embeddings WHERE thread_id = :t", t=thread) == [(winners[0],)]


def test_a_save_racing_a_thread_delete_never_leaves_a_saved_message_in_a_deleted_thread(worker):
    for attempt in range(6):
        thread = _thread()
        for i in range(3):
            append("saves", thread, f"turn {i} of a thread about to go", msg_id=f"d{i}")
        body = {"namespace": "saves", "thread_id": thread, "confirm_thread_id": thread}
        # A stored message, or (every other attempt) a new one the save would store.
        new = {"role": "user", "content": "a message saved as its thread goes"} if attempt % 2 else {}
        saved, _ = at_once(
            partial(save, thread, "n1" if new else "d1", namespace="saves", **new),
            partial(call, "conversation.delete", OPERATOR, body),
        )
        assert saved["saved"] or saved["reason"] == "deleted", attempt
        assert not rows("SELECT 1 FROM turns WHERE thread_id = :t AND deleted_at IS NULL", t=thread)
        assert not rows(
            "SELECT 1 FROM embeddings WHERE thread_id = :t AND deleted_at IS NULL AND is_saved", t=thread
        )


def test_a_save_repairs_what_an_interrupted_write_left(worker):
    thread = _thread()
    assert save(thread, "r1", role="user", content="the repair crew arrives at nine")["indexed"]
    # As if a write had stopped half-way: the embedding row gone, the turn's flag off.
    with db.session() as s:
        s.execute(text("DELETE FROM embeddings WHERE thread_id = :t"), {"t": thread})
        s.execute(text("UPDATE turns SET is_saved = false WHERE thread_id = :t"), {"t": thread})
        s.commit()
    answer = save(thread, "r1")
    assert answer["saved"] and answer["indexed"]
    assert rows("SELECT is_saved FROM turns WHERE thread_id = :t", t=thread) == [(True,)]
    assert rows("SELECT is_saved, vector IS NOT NULL FROM embeddings WHERE thread_id = :t", t=thread) == [
        (True, True)
    ]


def test_a_save_embeds_a_row_whose_run_ended_without_a_vector(worker, loom_env):
    loom_env(LOOM_SAVE_MESSAGE_WAIT_SECONDS="5")
    thread = _thread()
    append("saves", thread, "the backup window moved to two in the morning", msg_id="v1")
    assert save(thread, "v1", namespace="saves")["indexed"]
    with db.session() as s:  # as if its vector had been dropped as late and the run closed skipped
        s.execute(text("UPDATE embeddings SET vector = NULL WHERE thread_id = :t"), {"t": thread})
        s.execute(
            text(
                "UPDATE stage_runs SET status = 'skipped', reason = 'deleted' WHERE stage = 'embedding' "
                "AND subject IN (SELECT 'embedding:' || id FROM embeddings WHERE thread_id = :t)"
            ),
            {"t": thread},
        )
        s.commit()
    answer = save(thread, "v1", namespace="saves")
    assert answer["saved"] and answer["indexed"] and answer["reason"] is None
    assert rows("SELECT vector IS NOT NULL FROM embeddings WHERE thread_id = :t", t=thread) == [(True,)]


def test_a_failed_embed_is_stored_saved_and_a_second_save_retries_it(openai_embedder, worker):
    thread = _thread()
    openai_embedder.mode = "fail"
    answer = save(thread, "f1", role="user", content="the invoice batch failed at step three")
    assert answer["saved"] and not answer["indexed"] and answer["reason"] == "embed_failed"
    assert rows("SELECT is_saved FROM turns WHERE thread_id = :t", t=thread) == [(True,)]
    openai_embedder.mode = "ok"
    again = save(thread, "f1")
    assert again["indexed"] and again["reason"] is None
    assert _found(search_saved("invoice batch failed", search_mode="semantic"))[0] == (thread, "f1")


def test_an_embedding_that_lands_after_a_save_carries_the_flag():
    """The vector of a row whose turn was saved while it was embedded keeps the save's flag."""
    thread = _thread()
    append("saves", thread, "written before the save", msg_id="l1")
    with db.session() as s:  # the save landed while the embedding run was pending
        s.execute(
            text("UPDATE turns SET is_saved = true, saved_at = now(), user_id = 'ana' WHERE thread_id = :t"),
            {"t": thread},
        )
        s.commit()
    from tests.support.waits import settled, wait_until
    from workers import outbox
    from workers.runner import new_worker, stop

    outbox.sweep(grace_seconds=-1)
    w = new_worker(threads=1)
    w.start()
    try:
        wait_until(settled, what="the embedding")
    finally:
        stop(w)
    assert rows(
        "SELECT is_saved, user_id, vector IS NOT NULL FROM embeddings WHERE thread_id = :t", t=thread
    ) == [(True, "ana", True)]


def test_a_vector_stored_while_an_unsave_commits_does_not_flag_the_row_again(worker):
    """The embedding stage's write copies a saved turn's flag to its row: it must read the flag as
    the unsave left it, not as its snapshot from before the unsave's commit."""
    thread = _thread()
    append("saves", thread, "the vault combination changes monthly", msg_id="u1")
    assert save(thread, "u1", namespace="saves")["indexed"]
    [(row_id, digest, said, vector, model)] = rows(
        "SELECT id, digest, text, vector::text, model FROM embeddings WHERE thread_id = :t", t=thread
    )
    late = embedding.Pending(row_id, said, digest)

    def store() -> None:  # a vector made again (a retry, a model change) lands meanwhile
        with db.session() as s:
            embedding.store(s, [late], [json.loads(vector)], model)

    writer = threading.Thread(target=store)
    with db.session() as s:
        message = saving.Message("saves", thread, "u1", "ana", "default")
        assert saving.unsave(s, message, recording=True, now=utcnow()).found
        writer.start()
        wait_until(
            lambda: rows("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock'"),
            what="the vector's write to wait for the unsave",
        )
    writer.join(timeout=30)
    assert rows("SELECT is_saved, saved_at FROM embeddings WHERE id = :id", id=row_id) == [(False, None)]
    assert not _found(search_saved("vault combination", namespace="saves", search_mode="semantic"))


def test_unsave_keeps_a_recorded_turn_and_removes_one_only_the_save_kept(worker):
    kept, removed = _thread(), _thread()
    append("saves", kept, "a recorded answer about queues", role="assistant", msg_id="k1")
    save(kept, "k1", namespace="saves")
    assert unsave(kept, "k1", namespace="saves") == {
        "namespace": "saves",
        "conversation_id": kept,
        "message_id": "k1",
        "found": True,
        "removed": False,
    }
    assert rows("SELECT is_saved, deleted_at FROM turns WHERE thread_id = :t", t=kept) == [(False, None)]

    save(removed, "q1", role="user", content="a saved note about the parking permit")
    assert unsave(removed, "q1")["removed"] is True
    assert not rows("SELECT 1 FROM turns WHERE thread_id = :t", t=removed)
    assert rows("SELECT deleted_at IS NOT NULL FROM embeddings WHERE thread_id = :t", t=removed) == [(True,)]
    assert (removed, "q1") not in _found(search_saved("parking permit", limit=100))
    assert unsave(removed, "q1")["found"] is False  # idempotent
    restored = save(removed, "q1", role="user", content="a saved note about the parking permit")
    assert restored["stored"] and restored["indexed"]
    assert _found(search_saved("parking permit"))[0] == (removed, "q1")


def test_unsave_never_says_why_a_message_is_not_found(worker):
    thread = _thread()
    save(thread, "x1", role="user", content="bea's saved message", user="bea")
    for user, msg in (("ana", "x1"), ("ana", "never-saved"), ("bea", "never-saved")):
        assert unsave(thread, msg, user=user) == {
            "namespace": "quiet",
            "conversation_id": thread,
            "message_id": msg,
            "found": False,
            "removed": False,
        }
    assert rows("SELECT is_saved FROM turns WHERE thread_id = :t", t=thread) == [(True,)]


def test_search_saved_messages_is_one_users_saved_messages_in_one_namespace(worker):
    thread, user = _thread(), f"u-{uuid.uuid4().hex[:6]}"
    append("saves", thread, "the quarterly report draft lives in the finance folder", msg_id="s1")
    append("saves", thread, "quarterly report numbers are still unchecked", msg_id="s2")
    save(thread, "s1", user=user, namespace="saves")
    save(_thread(), "o1", user="other", namespace="saves", role="user", content="quarterly report for other")
    save(_thread(), "q1", user=user, namespace="quiet", role="user", content="quarterly report in quiet")
    for mode in ("hybrid", "semantic", "lexical"):
        hits = search_saved("quarterly report", user=user, namespace="saves", search_mode=mode)["hits"]
        assert [h["message_id"] for h in hits] == ["s1"], mode
    answer = search_saved("quarterly report", user=user, namespace="saves")
    assert answer["mode"] == "hybrid" and set(answer["stats"]["candidates"]) == {"lexical", "semantic"}
    assert answer["hits"][0]["saved_at"] is not None


def test_bm25_statistics_are_those_of_the_users_saved_messages(worker):
    """One saved message holding the word once: N = df = 1 and dl = avgdl, so its BM25 score is
    ln(1 + 0.5 / 1.5), whatever the namespace's other turns hold."""
    user = f"u-{uuid.uuid4().hex[:6]}"
    for i in range(5):
        append("saves", _thread(), f"zanzibar note number {i}")
    save(_thread(), "z1", user=user, namespace="saves", role="user", content="zanzibar")
    [hit] = search_saved("zanzibar", user=user, namespace="saves", search_mode="lexical")["hits"]
    assert hit["lexical_score"] == pytest.approx(math.log(1 + 0.5 / 1.5), abs=1e-4)


def test_bm25_statistics_count_each_saved_message_once_whatever_the_filter(worker):
    """ana and bo save the same three texts; ana's first message is held by two agents. Each
    user's corpus is their three saved messages, so every score is the same for both, and the
    same with the conversation filter as without it."""
    texts = ["quartz lantern harbour", "quartz ferry timetable", "lantern festival plans"]
    scores = {}
    for name in ("ana", "bo"):
        user = f"{name}-{uuid.uuid4().hex[:6]}"
        threads = [_thread() for _ in texts]
        for i, (thread, words) in enumerate(zip(threads, texts, strict=True)):
            if name == "ana" and i == 0:
                append("saves", thread, words, msg_id="m", agent="planner")
                append("saves", thread, words, msg_id="m", agent="coder")
                assert save(thread, "m", user=user, namespace="saves")["saved"]
            else:
                assert save(thread, "m", user=user, namespace="saves", role="user", content=words)["saved"]
        for query in ("quartz lantern", "ferry"):
            found = search_saved(query, user=user, namespace="saves", search_mode="lexical")["hits"]
            scores[name, query] = sorted(round(h["lexical_score"], 6) for h in found)
        narrowed = search_saved(
            "quartz lantern", user=user, namespace="saves", search_mode="lexical", conversation_id=threads[0]
        )["hits"]
        assert [round(h["lexical_score"], 6) for h in narrowed] == [max(scores[name, "quartz lantern"])]
    assert scores["ana", "quartz lantern"] == scores["bo", "quartz lantern"]
    assert scores["ana", "ferry"] == scores["bo", "ferry"]


def test_a_lexical_hit_deep_in_a_long_saved_answer_is_found_and_shown(worker):
    long = (
        "Background paragraph about nothing in particular. " * 120 + "The ticket is INC-48213 for the outage."
    )
    save(_thread(), "long1", role="assistant", content=long, user="deep")
    [hit] = search_saved("INC-48213", user="deep", search_mode="lexical")["hits"]
    assert "INC-48213" in hit["excerpt"]


def test_listing_is_newest_saved_first_with_a_cursor(worker):
    user, thread = f"u-{uuid.uuid4().hex[:6]}", _thread()
    for i in range(5):
        save(thread, f"l{i}", user=user, role="user", content=f"list item {i}")
    save(_thread(), "elsewhere", user=user, role="user", content="in another conversation")
    seen, cursor = [], None
    while True:
        page = call(
            "conversation.list_saved_messages",
            WRITER,
            {"namespace": "quiet", "user_id": user, "conversation_id": thread, "limit": 2, "cursor": cursor},
        )
        seen += [m["message_id"] for m in page["messages"]]
        if not (cursor := page["next_cursor"]):
            break
    assert seen == ["l4", "l3", "l2", "l1", "l0"]
    every = call("conversation.list_saved_messages", WRITER, {"namespace": "quiet", "user_id": user})
    assert every["messages"][0]["message_id"] == "elsewhere" and len(every["messages"]) == 6
    with pytest.raises(OpError) as refused:
        call(
            "conversation.list_saved_messages",
            WRITER,
            {"namespace": "quiet", "user_id": user, "cursor": "junk"},
        )
    assert refused.value.status == 422


def test_a_high_message_an_earlier_build_saved_is_listed_blank_and_never_found(worker):
    thread, user = _thread(), f"u-{uuid.uuid4().hex[:6]}"
    append("saves", thread, SECRET, msg_id="old")
    with db.session() as s:
        s.execute(
            text("UPDATE turns SET is_saved = true, saved_at = now(), user_id = :u WHERE thread_id = :t"),
            {"u": user, "t": thread},
        )
        s.commit()
    listed = call("conversation.list_saved_messages", WRITER, {"namespace": "saves", "user_id": user})
    assert [(m["message_id"], m["excerpt"]) for m in listed["messages"]] == [("old", "")]
    assert search_saved("card exp", user=user, namespace="saves")["hits"] == []


def test_a_row_flagged_without_a_save_time_is_listed_at_its_message_time(worker):
    thread, user = _thread(), f"u-{uuid.uuid4().hex[:6]}"
    append("saves", thread, "flagged by an earlier build", msg_id="old", ts="2026-01-02T03:04:05+00:00")
    with db.session() as s:
        s.execute(
            text("UPDATE turns SET is_saved = true, saved_at = NULL, user_id = :u WHERE thread_id = :t"),
            {"u": user, "t": thread},
        )
        s.commit()
    [listed] = call("conversation.list_saved_messages", WRITER, {"namespace": "saves", "user_id": user})[
        "messages"
    ]
    assert listed["ts"] == listed["said_at"] == "2026-01-02T03:04:05+00:00"


def test_saved_status_answers_each_message_for_this_user(worker):
    thread = _thread()
    save(thread, "a", role="user", content="first")
    save(thread, "b", role="user", content="second", user="bea")
    answer = call(
        "conversation.saved_status",
        WRITER,
        {"namespace": "quiet", "user_id": "ana", "conversation_id": thread, "message_ids": ["a", "b", "c"]},
    )
    assert [(m["message_id"], m["is_saved"]) for m in answer["messages"]] == [
        ("a", True),
        ("b", False),
        ("c", False),
    ]
    with pytest.raises(OpError) as refused:
        call(
            "conversation.saved_status",
            WRITER,
            {"namespace": "quiet", "user_id": "ana", "conversation_id": thread, "message_ids": ["m"] * 501},
        )
    assert refused.value.status == 422


def test_a_namespace_wide_token_must_name_the_user():
    with pytest.raises(OpError) as refused:
        call("conversation.search_saved_messages", WRITER, {"namespace": "quiet", "query": "x"})
    assert refused.value.status == 422 and refused.value.field == "user_id"


def test_erasure_by_user_removes_their_saved_messages(worker):
    user = f"gone-{uuid.uuid4().hex[:6]}"
    save(_thread(), "e1", user=user, role="user", content="a message the user asked to forget")
    erased = call("erasure.request", OPERATOR, {"namespace": "quiet", "user_id": user, "wait": True})
    assert erased["run"]["status"] == "succeeded"
    assert not rows("SELECT 1 FROM turns WHERE user_id = :u AND deleted_at IS NULL", u=user)
    assert search_saved("forget", user=user)["hits"] == []
    listed = call("conversation.list_saved_messages", WRITER, {"namespace": "quiet", "user_id": user})
    assert listed["messages"] == []
