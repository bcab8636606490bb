"""A said turn's lexical context (``pipelines.contexts``): the previous said turn's words, when it
is short, are part of the turn's lexical document. Written by the append in its one statement,
rebuilt by a deletion and by unsaving a turn a save stored, left out of saved-message search, and
filled for turns written before contexts existed by the contexts stage. (The other paths that hide
a turn are tested beside them: compaction, erasure, retention, re-screening.)"""

import re

from sqlalchemy import text

from models import db
from models.stages import CONTEXTS
from ops.caller import OPERATOR, Caller
from ops.registry import call
from pipelines import contexts
from schedules.contexts import build_missing
from tests.support.calls import append, enable_logging, found_lexically
from tests.support.rows import context_of, lexemes_of
from tests.support.waits import settled, wait_until
from workers import ledger

NS = "contexts"
QUESTION = "Which museum in France shows the Mona Lisa?"
REPLY = "Yes, the one in Paris!"


def setup_module():
    enable_logging(NS)


def state(thread: str) -> tuple:
    """Every turn's context and the thread row's ``said_*``, as text."""
    with db.session() as s:
        turns = s.execute(
            text(
                "SELECT agent, msg_id, context_lexemes::text, context_length FROM turns "
                "WHERE namespace = :ns AND thread_id = :t ORDER BY id"
            ),
            {"ns": NS, "t": thread},
        ).all()
        said = s.execute(
            text(
                "SELECT said_msg_id, said_lexemes::text, said_context::text FROM threads "
                "WHERE namespace = :ns AND thread_id = :t"
            ),
            {"ns": NS, "t": thread},
        ).one()
    return tuple(turns), tuple(said)


def test_a_short_reply_is_found_by_what_it_answers_lexically_and_in_hybrid(worker):
    append(NS, "louvre", QUESTION, msg_id="q")
    append(NS, "louvre", REPLY, role="assistant", msg_id="a")
    assert context_of(NS, "louvre", "a") == lexemes_of(QUESTION)
    assert "a" in found_lexically(NS, "museum Mona Lisa", thread_id="louvre")
    wait_until(settled, what="the embeddings")
    body = {"namespace": NS, "query": "museum Mona Lisa", "thread_id": "louvre", "search_mode": "hybrid"}
    hits = {hit["msg_id"]: hit for hit in call("conversation.search", OPERATOR, body)["hits"]}
    assert "lexical" in hits["a"]["found_by"]


def test_a_turn_after_one_of_more_than_200_characters_has_no_context():
    short = "The lighthouse keeper retired " + "x" * (contexts.SHORT_CHARS - 30)
    long = "The harbour master retired " + "y" * (contexts.SHORT_CHARS + 1 - 27)
    assert (len(short), len(long)) == (contexts.SHORT_CHARS, contexts.SHORT_CHARS + 1)
    append(NS, "edges", short, msg_id="short")
    append(NS, "edges", "Sure.", role="assistant", msg_id="after-short")
    append(NS, "edges", long, msg_id="long")
    append(NS, "edges", "Indeed.", role="assistant", msg_id="after-long")
    assert context_of(NS, "edges", "after-short") == lexemes_of(short)
    # A long turn gives none, and the turn before it is not taken instead.
    assert context_of(NS, "edges", "long") == lexemes_of("Sure.")
    assert context_of(NS, "edges", "after-long") is None
    assert "after-short" in found_lexically(NS, "lighthouse keeper")
    assert "after-long" not in found_lexically(NS, "harbour master")


def test_a_context_comes_with_the_neighbour_and_a_resent_turn_changes_nothing():
    append(NS, "resend", QUESTION, msg_id="q")
    assert context_of(NS, "resend", "q") is None  # the thread's first turn
    append(NS, "resend", REPLY, role="assistant", msg_id="a")
    assert context_of(NS, "resend", "a") == lexemes_of(QUESTION)
    before = state("resend")
    assert before[1][0] == "a"  # the thread's latest said message
    again = append(NS, "resend", REPLY, role="assistant", msg_id="a")
    assert again["stored"] is False and state("resend") == before


def test_another_agents_copy_takes_the_messages_context_not_its_own_text():
    append(NS, "copies", QUESTION, msg_id="q", agent="planner")
    append(NS, "copies", REPLY, role="assistant", msg_id="a", agent="planner")
    append(NS, "copies", REPLY, role="assistant", msg_id="a", agent="critic")
    assert context_of(NS, "copies", "a", agent="critic") == lexemes_of(QUESTION)
    append(NS, "copies", "Then book two tickets.", msg_id="b", agent="critic")
    assert context_of(NS, "copies", "b", agent="critic") == lexemes_of(REPLY)


def test_a_rebuild_computes_what_the_appends_wrote():
    """Copies of agents interleaved, a system turn, a turn that reads as high, a long one: a
    rebuild from the turns changes nothing the appends wrote."""
    said = [
        ("planner", "m1", "user", "Where do we meet for the harbour tour?"),
        ("critic", "m1", "user", "Where do we meet for the harbour tour?"),
        ("planner", "m2", "system", "a note the system keeps"),
        ("planner", "m3", "assistant", "At the north pier, at nine."),
        ("planner", "m4", "user", "my password is hunter2-Tr0ub4dor&3x, keep it"),
        ("critic", "m3", "assistant", "At the north pier, at nine."),
        ("planner", "m5", "assistant", "The tour lasts " + "long " * 60),
        ("planner", "m6", "user", "Fine."),
        ("critic", "m6", "user", "Fine."),
    ]
    for agent, msg, role, content in said:
        append(NS, "rebuild", content, role=role, msg_id=msg, agent=agent)
    before = state("rebuild")
    assert context_of(NS, "rebuild", "m3", agent="planner") == lexemes_of(said[0][3])
    assert context_of(NS, "rebuild", "m4", agent="planner") is None  # high: no context, and no one's
    assert context_of(NS, "rebuild", "m5", agent="planner") == lexemes_of(said[3][3])
    with db.session() as s:
        assert contexts.rebuild(s, [(NS, "rebuild")]) == 0
    assert state("rebuild") == before


def test_deleting_an_agents_copies_rebuilds_the_contexts_their_words_were_in():
    append(NS, "delete", "We fly to Lisbon on Monday.", msg_id="d0", agent="planner")
    append(NS, "delete", "The Louvre tour is booked for Tuesday.", msg_id="d1", agent="guide")
    append(NS, "delete", "Yes, the one in Paris!", role="assistant", msg_id="d2", agent="planner")
    assert "d2" in found_lexically(NS, "Louvre tour booked")
    body = {"namespace": NS, "thread_id": "delete", "confirm_thread_id": "delete", "agent": "guide"}
    assert call("conversation.delete", OPERATOR, body)["turns_deleted"] == 1
    assert found_lexically(NS, "Louvre tour booked", thread_id="delete") == []
    assert context_of(NS, "delete", "d2", agent="planner") == lexemes_of("We fly to Lisbon on Monday.")


def test_unsaving_a_message_only_the_save_kept_rebuilds_the_next_turns_context(worker):
    enable_logging("contexts-quiet", enabled=False)
    writer = Caller(role="writer", namespaces=("contexts-quiet",))

    def save(msg: str, content: str) -> dict:
        body = {
            "namespace": "contexts-quiet",
            "conversation_id": "notes",
            "message_id": msg,
            "user_id": "ana",
            "role": "user",
            "content": content,
        }
        return call("conversation.save_message", writer, body)

    save("n1", "The spare key is under the blue flowerpot.")
    save("n2", "Got it.")
    assert context_of("contexts-quiet", "notes", "n2") == lexemes_of(
        "The spare key is under the blue flowerpot."
    )
    body = {"namespace": "contexts-quiet", "conversation_id": "notes", "message_id": "n1", "user_id": "ana"}
    assert call("conversation.unsave_message", writer, body)["removed"]
    assert context_of("contexts-quiet", "notes", "n2") is None
    assert found_lexically("contexts-quiet", "spare key flowerpot") == []


def test_saved_message_search_does_not_match_by_a_context(worker):
    append(NS, "saved", QUESTION, msg_id="q")
    append(NS, "saved", REPLY, role="assistant", msg_id="a")
    writer = Caller(role="writer", namespaces=(NS,))
    body = {"namespace": NS, "conversation_id": "saved", "message_id": "a", "user_id": "ana"}
    assert call("conversation.save_message", writer, body)["saved"]

    def found(query: str) -> list[str]:
        body = {"namespace": NS, "user_id": "ana", "query": query, "search_mode": "lexical"}
        answer = call("conversation.search_saved_messages", writer, body)
        return [hit["message_id"] for hit in answer["hits"]]

    assert found("Paris") == ["a"]
    assert found("museum Mona Lisa") == []  # the question's words are another's, not the saved message's


def test_the_contexts_stage_fills_turns_written_without_one_and_twice_is_once(worker):
    for i, content in enumerate(["Did the parcel from Oslo arrive?", "It did, this morning.", "Great."]):
        append(NS, "backfill", content, msg_id=f"b{i}", ts=f"1979-0{i + 1}-15T10:00:00Z")
    written = state("backfill")
    with db.session() as s:  # as before contexts existed
        s.execute(text("UPDATE turns SET context_lexemes = NULL WHERE thread_id = 'backfill'"))
        s.execute(
            text(
                "UPDATE threads SET said_msg_id = NULL, said_lexemes = NULL, said_context = NULL "
                "WHERE thread_id = 'backfill'"
            )
        )
    assert context_of(NS, "backfill", "b1") is None

    sent = build_missing()  # the pass asks for every month once
    months = {ledger.get(run_id).subject for run_id in sent}
    assert {"month:197901", "month:197902", "month:197903"} <= months
    wait_until(settled, what="the contexts runs")
    assert state("backfill") == written
    assert build_missing() == []  # a month done is not asked again

    with db.session() as s:  # delivered again: nothing more changes
        s.execute(text("UPDATE stage_runs SET status = 'pending' WHERE id = ANY(:ids)"), {"ids": sent})
    from workers import outbox

    outbox.send(CONTEXTS, sent)
    wait_until(settled, what="the contexts runs again")
    assert state("backfill") == written
    assert all(ledger.get(run_id).status == "succeeded" for run_id in sent)


def test_the_lexical_legs_candidates_come_from_both_indexes():
    """The lexical leg's statements read the turns holding a word, in their own lexemes or their
    context's, as a BitmapOr of the two partial indexes (6,000 turns in five namespaces,
    sequential scans off): each statement implies both predicates and holds its tsquery as a
    value known when it runs."""
    from sqlalchemy import event

    from pipelines import search as pipeline

    with db.session() as s:
        s.execute(
            text(
                """
                INSERT INTO turns (id, namespace, thread_id, agent, msg_id, role, content, metadata,
                                   sensitivity, ts, context_lexemes, context_length)
                SELECT nextval('turns_id_seq'), 'contexts-plan-' || (i % 5), 'plan-' || (i / 10),
                       'default', 'p' || i, 'user', 'turn ' || i || ' about topic' || (i % 300), '{}',
                       'none', now(),
                       CASE WHEN i % 2 = 0 THEN to_tsvector('english', 'topic' || ((i + 5) % 300)) END, i % 2
                FROM generate_series(1, 6000) i
                """
            )
        )
    with db.autocommit() as conn:  # the GIN indexes' own statistics too, as autovacuum keeps them
        conn.execute("VACUUM ANALYZE turns")
    seen = []

    def capture(conn, cursor, statement, parameters, context, executemany):
        seen.append((statement, parameters))

    engine = db.get_engine()
    event.listen(engine, "before_cursor_execute", capture)
    try:
        with db.session() as s:
            found = pipeline.by_lexical(s, "topic17", pipeline.Filters(namespaces=["contexts-plan-2"]), 10)
    finally:
        event.remove(engine, "before_cursor_execute", capture)
    assert {hit.msg_id for hit in found} <= {f"p{i}" for i in range(12, 6000, 300)} | {
        f"p{i}" for i in range(17, 6000, 300)
    } and len(found) == 10
    statements = [(st, p) for st, p in seen if "@@" in st]
    assert len(statements) == 2  # a word's document frequency, then BM25
    with db.session() as s:
        s.execute(text("SET LOCAL enable_seqscan = off"))
        parents = dict(s.execute(text(PARENT_INDEXES)).all())
        for statement, parameters in statements:
            rows = s.connection().exec_driver_sql("EXPLAIN " + statement, parameters)
            plan = "\n".join(row[0] for row in rows)
            used = {parents.get(name) for name in re.findall(r"Bitmap Index Scan on (\w+)", plan)}
            assert "BitmapOr" in plan and used == {
                "ix_turns_namespace_lexemes",
                "ix_turns_namespace_context",
            }, plan


# Each index of a partition of turns, and the index of turns it is a part of.
PARENT_INDEXES = """
SELECT c.relname, p.relname FROM pg_inherits i
JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
"""
