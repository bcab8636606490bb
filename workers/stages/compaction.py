"""The compaction stage: one run summarises one agent's transcript of a thread.

A run reads its window, asks the LLM for the summary and embeds it with no transaction open, then
writes the summary and tombstones the window in one transaction that also closes the run: killed
anywhere, it leaves the thread fully compacted or untouched, and the lease hands an unfinished
run to another worker. Requested by ``conversation.compact`` and by the optional scheduler pass
over threads grown past ``LOOM_COMPACTION_AUTO_TURNS``."""

import logging

from sqlmodel import Session

from models import db
from models.base import utcnow
from models.settings import get_settings
from models.stage_run import SKIPPED, SUCCEEDED, StageRun
from models.stages import COMPACTION, EMBEDDING
from pipelines import compaction, embedding, keys, screening, sessions
from providers import llm
from providers.embedders import get_embedder
from workers import ledger
from workers.asking import asked, committed
from workers.bodies import close, one_at_a_time, retry_later
from workers.stages import register

log = logging.getLogger(__name__)


class Retry(Exception):
    """A transient failure past the model's answer: the run goes back to pending with backoff
    (``reason`` says what kind, kept if it ends failed)."""

    def __init__(self, error: str, reason: str | None = None) -> None:
        super().__init__(error)
        self.reason = reason


def compact_threads(run_ids: list[int]) -> None:
    one_at_a_time(COMPACTION, run_ids, _work)


register(COMPACTION, compact_threads)


def _work(run: StageRun) -> None:
    try:
        with ledger.leased([run]):
            outcome = _compact(run)
    except Retry as exc:
        retry_later(COMPACTION, run, str(exc), reason=exc.reason)
        return
    if isinstance(outcome, str):
        close(run, SKIPPED, reason=outcome)


def _compact(run: StageRun) -> str | None:
    """Compact, closing the run; or the reason it was skipped. Raises Retry."""
    settings = get_settings()
    agent = run.params["agent"]
    thread_row_id = COMPACTION.subject_id(run.subject)
    budget = settings.llm_prompt_max_chars - len(compaction.INSTRUCTIONS) - 200
    with db.session() as s:
        thread, turns, saved = compaction.load(s, thread_row_id, agent)
    if thread is None:
        return "deleted"
    window = compaction.choose(turns, saved, run.params["keep_recent"], run.params["min_to_compact"], budget)
    if window is None:
        return compaction.NOTHING_TO_COMPACT
    prompt = compaction.prompt(window, budget)
    if not compaction.sendable(prompt):  # each line passed; together they read as high
        return compaction.PROMPT_HIGH
    answer = asked(
        COMPACTION,
        run,
        lambda: llm.get_llm().ask(compaction.Summary, compaction.INSTRUCTIONS, prompt),
        "summarizer failed",
    )
    if answer is None:
        return None
    summary = answer.summary.strip()[: compaction.SUMMARY_MAX_CHARS]
    if screening.is_high(summary):
        return compaction.SUMMARY_HIGH  # never embedded; a retry would pay for the same summary
    with db.session() as s:  # read as the summary is written: a retry reads them again
        held = sessions.held_in_conversation(s, thread.namespace, thread.thread_id, agent, utcnow())
    summary = compaction.with_held(summary, held, settings.tapestry_max_tokens)
    embedded_text = embedding.embedding_text(summary, settings.embed_max_chars)
    try:
        embedder = get_embedder()
        vector = embedder.embed([embedded_text])[0]
    except Exception as exc:
        raise Retry(
            f"{compaction.EMBED_FAILED}: {type(exc).__name__}: {exc}", compaction.EMBED_FAILED
        ) from exc
    embedded = compaction.Embedded(embedded_text, vector, embedder.name)
    with db.session() as s:
        written = compaction.apply(s, thread_row_id, agent, window, summary, embedded, utcnow())
        if written is None:
            raise Retry("the window changed while it was summarised")
        embedding_id, result = written
        # The summary's vector counts as its embedding run, so the re-embedding pass covers it.
        ledger.request(s, EMBEDDING, embedding_id, keys.digest(embedded_text)[:16], {}, status=SUCCEEDED)
        if not committed(s, run, result=result):
            return None  # the worker that holds the run now decides
    log.info(
        "compacted %d turns of thread %s into %s",
        result["messages_summarized"],
        thread.thread_id,
        result["summary_msg_id"],
    )
    return None


def request(
    s: Session, thread_row_id: int, agent: str, keep_recent: int, min_to_compact: int, revive: bool = False
) -> StageRun:
    """The compaction run for the agent's transcript as it stands (its newest live turn): asking
    twice before anything new arrives is one run; ``revive`` (a person asking) retries it if it
    failed."""
    newest = compaction.newest_turn(s, thread_row_id, agent)
    params = {"agent": agent, "keep_recent": keep_recent, "min_to_compact": min_to_compact}
    version = keys.digest(agent, str(newest), str(keep_recent), str(min_to_compact))[:16]
    return ledger.request(s, COMPACTION, thread_row_id, version, params, revive=revive)
