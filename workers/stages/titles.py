"""The thread-title stage and the titler pass that feeds it.

The pass only enqueues: untitled live threads of recording namespaces, active within the window,
with enough live turns, not marked ``title_refused``, at most a cap a pass. A run titles one
thread from its first eight user and assistant turns, never sending one that reads as high: when
all eight read as high, or the title the model writes does, the thread stays untitled and is
marked ``title_refused`` in its metadata so it is not asked again (new metadata from
``conversation.update`` replaces the mark); with fewer such turns it waits, unmarked, for a plain
one. A title a person set meanwhile is never overwritten."""

import json
import logging
from datetime import timedelta

from pydantic import BaseModel, Field
from sqlalchemy import text
from sqlmodel import Session, col, select

from models import db
from models.base import utcnow
from models.conversation import EMBEDDED_ROLES, Thread, Turn
from models.settings import get_settings
from models.stage_run import PENDING, SKIPPED, SUCCEEDED, StageRun
from pipelines import keys, screening
from providers import llm
from workers import ledger, outbox
from workers.bodies import close, one_at_a_time, retry_later
from workers.stages import Stage, register

log = logging.getLogger(__name__)

STAGE = "title"
REFUSED = "title_refused"  # the metadata mark
FIRST_TURNS = 8
TURN_CHARS = 500  # of each turn, in the prompt (less when LOOM_LLM_PROMPT_MAX_CHARS is small)
TITLE_MAX_CHARS = 80
INSTRUCTIONS = (
    "Write a short title (three to eight words) for the conversation below, naming its subject. "
    "No quotes, no trailing punctuation."
)


class Title(BaseModel):
    title: str = Field(min_length=1, description="the conversation's title")


def title_threads(run_ids: list[int]) -> None:
    one_at_a_time(TITLE, run_ids, _work)


TITLE = register(Stage(STAGE, title_threads, subject_kind="thread", chunk=1))


def _work(run: StageRun) -> None:
    thread_row_id = TITLE.subject_id(run.subject)
    with db.session() as s:
        thread = s.get(Thread, thread_row_id)
        first = _first_turns(s, thread) if thread else []
    if thread is None or thread.deleted_at is not None:
        return close(run, SKIPPED, reason="deleted")
    if thread.title:
        return close(run, SKIPPED, reason="titled")
    # Each turn cut to fit the prompt cap, and screened as it would be sent (a cut can make a shape).
    cut = min(TURN_CHARS, (get_settings().llm_prompt_max_chars - len(INSTRUCTIONS)) // FIRST_TURNS - 16)
    lines = [f"{turn.role}: {turn.content[:cut]}" for turn in first if turn.sensitivity != "high"]
    plain = [line for line in lines if not screening.is_high(line)]
    if not plain or screening.is_high("\n".join(plain)):
        if len(first) >= FIRST_TURNS:
            return _refuse(run, thread_row_id, REFUSALS[0])
        return close(run, SKIPPED, reason="waiting-for-plain-turn")
    prompt = "\n".join(plain)
    try:
        with ledger.leased([run]):
            answer = llm.get_llm().ask(Title, INSTRUCTIONS, prompt)
    except llm.NoProvider:
        return close(run, SKIPPED, reason=llm.NO_PROVIDER_REASON)
    except llm.LLMFailed as exc:
        return retry_later(TITLE, run, f"titler failed: {exc}")
    title = " ".join(answer.title.split()).strip(" \"'.")[:TITLE_MAX_CHARS]
    if not title:
        return close(run, SKIPPED, reason="empty-title")
    if screening.is_high(title):
        return _refuse(run, thread_row_id, REFUSALS[1])
    with db.session() as s:
        s.execute(
            text("UPDATE threads SET title = :title WHERE id = :id AND title IS NULL AND deleted_at IS NULL"),
            {"title": title, "id": thread_row_id},
        )
        ledger.finish(s, [run], SUCCEEDED, result={"title": title})
    return None


def _first_turns(s: Session, thread: Thread) -> list[Turn]:
    return list(
        s.exec(
            select(Turn)
            .where(
                Turn.namespace == thread.namespace,
                Turn.thread_id == thread.thread_id,
                col(Turn.role).in_(EMBEDDED_ROLES),
                col(Turn.deleted_at).is_(None),
            )
            .order_by(col(Turn.ts), col(Turn.id))
            .limit(FIRST_TURNS)
        )
    )


def _refuse(run: StageRun, thread_row_id: int, reason: str) -> None:
    """Untitled for good: the mark keeps the pass from asking again."""
    with db.session() as s:
        s.execute(
            text(
                "UPDATE threads SET metadata = metadata || jsonb_build_object(CAST(:mark AS text), true) "
                "WHERE id = :id"
            ),
            {"mark": REFUSED, "id": thread_row_id},
        )
        ledger.finish(s, [run], SKIPPED, reason=reason)


REFUSALS = ("every-turn-high", "title-high-sensitivity")

# Threads that want a title and were not asked as they stand: no title run since their last turn
# but a refusal (a thread still marked is left out; one whose mark new metadata replaced is asked
# once more). ``refusals`` counts the thread's refusals, part of a request's version.
CANDIDATES = text(f"""
SELECT th.id, th.metadata,
       (SELECT max(t.id) FROM turns t
        WHERE t.namespace = th.namespace AND t.thread_id = th.thread_id AND t.deleted_at IS NULL) AS newest,
       (SELECT count(*) FROM stage_runs r
        WHERE r.stage = 'title' AND r.subject = 'thread:' || th.id AND r.reason IN {REFUSALS}) AS refusals
FROM threads th
JOIN namespaces n ON n.name = th.namespace AND n.conversation_logging_enabled
WHERE th.title IS NULL AND th.deleted_at IS NULL AND NOT th.metadata ? 'title_refused'
  AND th.last_turn_at >= :since AND th.turn_count >= :min_turns
  AND NOT EXISTS (SELECT FROM stage_runs r
                  WHERE r.stage = 'title' AND r.subject = 'thread:' || th.id
                    AND r.created_at >= th.last_turn_at AND coalesce(r.reason, '') NOT IN {REFUSALS})
ORDER BY th.last_turn_at DESC
LIMIT :limit
""")


def _version(newest_turn: int | None, metadata: dict, refusals: int) -> str:
    return keys.digest(str(newest_turn), json.dumps(metadata, sort_keys=True), str(refusals))[:16]


def title_untitled() -> list[int]:
    """The titler pass: a run for each thread that wants a title, as it stands (its newest turn
    and its metadata: new turns or new metadata make a new request). Returns the runs sent."""
    settings = get_settings()
    if not settings.conversation_titler_enabled:
        return []
    if not llm.configured():
        llm.note_unconfigured(log, "the titler")
        return []
    since = utcnow() - timedelta(hours=settings.conversation_titler_window_hours)
    params = {
        "since": since,
        "min_turns": settings.conversation_titler_min_turns,
        "limit": settings.conversation_titler_max_threads_per_pass,
    }
    with db.session() as s:
        wanted = s.execute(CANDIDATES, params).all()
        runs = [
            ledger.request(s, TITLE, row_id, _version(newest, meta, refusals), {})
            for row_id, meta, newest, refusals in wanted
        ]
    pending = [run.id for run in runs if run.status == PENDING]
    if pending:
        outbox.send(STAGE, pending)
    return pending
