"""The night weaving stage and the nightly pass that feeds it.

The pass (``weave_night``, on ``LOOM_NIGHT_WEAVING_CRON``, or `loom night-weave`) only enqueues: it
records a night weaving and requests one run for each session awaiting the night, keyed by
(session, ``consolidatedUpToSequence``, ``lastSequence``): firing the same night twice sends nothing
new, and a session consolidated in part gets a run for the rest. A run consolidates its session
(``pipelines.night_weaving``): the model is asked outside any transaction, then the episodes, the
judgement, the weights and the session's advance are written in one transaction with the run's
close and the night weaving's counts. Killed at any point, a session is consolidated for its range
or untouched; a failed run is retried by `loom runs retry` alone."""

import logging
from uuid import UUID

from sqlmodel import Session, col, select

from models import db
from models.base import stored, utcnow
from models.memory import Loom, LoomSession, NightWeaving
from models.settings import get_settings
from models.stage_run import PENDING, SKIPPED, StageRun
from models.stages import MEMORY_EMBEDDING, NIGHT_WEAVING
from pipelines import night_weaving, screening
from providers import llm
from workers import ledger, outbox
from workers.asking import asked, committed
from workers.bodies import close, one_at_a_time
from workers.stages import register

log = logging.getLogger(__name__)


def weave(run_ids: list[int]) -> None:
    one_at_a_time(NIGHT_WEAVING, run_ids, _work)


register(NIGHT_WEAVING, weave)


def _work(run: StageRun) -> None:
    settings = get_settings()
    up_to = run.params["up_to"]
    with db.session() as s:
        session = s.exec(
            select(LoomSession).where(col(LoomSession.row_id) == NIGHT_WEAVING.subject_id(run.subject))
        ).first()
        if session is None:
            return close(run, SKIPPED, reason="deleted")
        if session.consolidated_up_to_sequence >= up_to:
            return close(run, SKIPPED, reason="consolidated")
        read = night_weaving.new_turns(s, session, up_to, settings.night_weaving_max_turns + 1)
    # More than a night's share waits: this night reads its share, the next nights the rest.
    if len(read) > settings.night_weaving_max_turns:
        read = read[: settings.night_weaving_max_turns]
        read_to = read[-1].seq
    else:
        read_to = up_to
    turns = night_weaving.sendable(read)
    woven = night_weaving.Episodes(), turns
    if turns:
        budget = settings.llm_prompt_max_chars - len(night_weaving.INSTRUCTIONS) - 200
        prompt, sent = night_weaving.prompt(turns, budget)

        def built() -> tuple[night_weaving.Episodes, list[night_weaving.Turn]]:
            """Without a model, or a prompt to send one, the deterministic builder weaves."""
            return night_weaving.built(session, turns), turns

        if screening.is_high(prompt):  # each line passed; together they read as high
            woven = built()
        else:
            answer = asked(
                NIGHT_WEAVING,
                run,
                lambda: (llm.get_llm().ask(night_weaving.Episodes, night_weaving.INSTRUCTIONS, prompt), sent),
                "night weaving failed",
                without_model=built,
            )
            if answer is None:
                return None
            woven = answer
    _consolidate(run, session.id, read_to, *woven)
    return None


def _consolidate(run: StageRun, session_id: UUID, read_to: int, episodes, sent) -> None:
    """Everything the night writes for the session, in one transaction with the run's close."""
    now = utcnow()
    with db.session() as s:
        session = s.exec(select(LoomSession).where(col(LoomSession.id) == session_id).with_for_update()).one()
        if session.consolidated_up_to_sequence >= read_to:
            ledger.finish(s, [run], SKIPPED, reason="consolidated")
            return
        loom = s.get(Loom, session.loom_id)
        threads = night_weaving.woven(s, session, episodes, sent, loom, now)
        used, unused = night_weaving.judge(session)
        reweighed = night_weaving.reweigh(s, used, unused, now)
        superseded = night_weaving.supersede(s, session, threads, now)
        weaving_id = UUID(run.params["night_weaving_id"])
        session.judged_thread_ids = [*session.judged_thread_ids, *used, *unused]
        session.consolidated_up_to_sequence = read_to
        session.consolidated_by_night_weaving_id = weaving_id
        session.awaiting_night = session.last_sequence > read_to
        session.date_updated = now
        s.add(session)
        judged = {"judged": len(used) + len(unused), "used": len(used)}
        # What the night changed for this session, kept with the run (the dashboard's Memory page
        # shows it): the episodes it wrote, each judged thread's weight before and after, and the
        # threads it ended as superseded.
        result = {
            "episodes": len(threads),
            **judged,
            "consolidated_up_to": read_to,
            "episode_ids": [str(t.id) for t in threads],
            "reweighed": reweighed,
            "superseded": superseded,
        }
        if not committed(s, run, result=result):
            return
        embedding_runs = [
            ledger.request(s, MEMORY_EMBEDDING, stored(t.row_id), t.digest[:16], {}) for t in threads
        ]
        _count(s, weaving_id, stored(run.id), episodes=len(threads), **judged, now=now)
    pending = [stored(r.id) for r in embedding_runs if r.status == PENDING]
    if pending:
        outbox.wake(MEMORY_EMBEDDING, pending)


def _count(s: Session, weaving_id: UUID, run_id: int, episodes: int, judged: int, used: int, now) -> None:
    """Add a consolidated session to its night weaving; the last of its runs to close finishes it
    (under the weaving's row lock, so of two closing at once the later sees the other closed).
    FOR NO KEY UPDATE: each close already holds a key-share lock on the row through its session's
    foreign key, and a plain FOR UPDATE of two closes would wait on each other's."""
    weaving = s.exec(
        select(NightWeaving).where(col(NightWeaving.id) == weaving_id).with_for_update(key_share=True)
    ).one()
    weaving.consolidated += 1
    weaving.episodes += episodes
    weaving.judged += judged
    weaving.used += used
    if not night_weaving.open_runs(s, weaving_id, run_id):
        weaving.finished_at = now
    s.add(weaving)
