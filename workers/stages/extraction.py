"""The extraction stage: one run a batch of messages handed to memory.set_from_messages, or of a
session's observations handed over by observe.crystallize (``episodes``), its subject the batch's
first evidence row, its version the digest of all of them. The work is ``pipelines.extraction``'s
(``pipelines.episodes``' for observations); the model is asked outside any transaction. Without a
provider a batch of messages is skipped (the stock fake provider extracts nothing), and a batch of
observations gets the deterministic builder's episodes; a batch of observations with nothing worth
remembering (``episodes.worth_remembering``) is skipped either way, with no model asked. In a loom
that weaves in ``Suggest`` mode the memories are proposed to the agent's session
(``pendingProposals``) instead of written. A fact the model says makes a known thread untrue ends
that thread (``extraction.replaced``) in the transaction that writes the fact; run again, the ended
thread is no longer known, so nothing more changes."""

import logging
from dataclasses import replace
from uuid import UUID

from sqlmodel import Session

from models import db
from models.base import stored, utcnow
from models.memory import SUGGEST, Loom, MemoryThread
from models.settings import get_settings
from models.stage_run import SKIPPED, StageRun
from models.stages import EXTRACTION, MEMORY_EMBEDDING
from pipelines import episodes, extraction, keys, memory, screening, sessions
from providers import llm
from workers import ledger, outbox
from workers.asking import asked, committed
from workers.bodies import close, one_at_a_time
from workers.stages import register

log = logging.getLogger(__name__)


def extract(run_ids: list[int]) -> None:
    one_at_a_time(EXTRACTION, run_ids, _work)


register(EXTRACTION, extract)


def request(
    s: Session,
    loom: Loom,
    evidence_ids: list[int],
    thread_id: str,
    agent: str,
    run_id: str | None,
    episodes: bool = False,
) -> StageRun:
    """The run of one batch (asking twice for the same messages is one run); ``episodes``: a
    session's observations, made into Episodic memories."""
    params = {
        "loom_id": str(loom.id),
        "evidence_ids": evidence_ids,
        "thread_id": thread_id,
        "agent": agent,
        "run_id": run_id,
        **({"episodes": True} if episodes else {}),
    }
    version = keys.digest(*(str(i) for i in evidence_ids))[:16]
    return ledger.request(s, EXTRACTION, evidence_ids[0], version, params, revive=True)


def _work(run: StageRun) -> None:
    loom_id, agent, run_id = UUID(run.params["loom_id"]), run.params["agent"], run.params["run_id"]
    with db.session() as s:
        evidence = extraction.load(s, run.params["evidence_ids"])
        batch = episodes.batch(s, evidence) if run.params.get("episodes") else None
    if batch is not None and not episodes.worth_remembering(batch.actions):
        return close(run, SKIPPED, reason="nothing-worth-remembering")  # no model asked, no episode
    instructions = extraction.INSTRUCTIONS if batch is None else episodes.INSTRUCTIONS
    budget = get_settings().llm_prompt_max_chars - len(instructions) - 200
    prompt, sent = extraction.prompt(evidence, budget)
    if not sent:
        return close(run, SKIPPED, reason="nothing-to-send")
    known: dict[str, MemoryThread] = {}
    if batch is None:  # what a fact may replace (an episode replaces nothing)
        with db.session() as s:
            known = extraction.known(s, loom_id, prompt, utcnow())
        section = extraction.known_section(known)
        if len(prompt) + len(section) <= budget:
            prompt += section
        else:
            known = {}
    if screening.is_high(prompt):  # each line passed; together they read as high
        return close(run, SKIPPED, reason="prompt-high-sensitivity")

    def from_model() -> tuple[int, list[memory.NewMemory], list[MemoryThread]]:
        """The facts the model found, the memories made of them and the known threads they end."""
        facts = llm.get_llm().ask(extraction.Facts, instructions, prompt)
        new = extraction.memories(loom_id, facts, sent, agent, run_id)
        if batch is not None:
            return len(facts.facts), [replace(item, kind="Episodic") for item in new], []
        return len(facts.facts), new, extraction.replaced(facts, known)

    def built() -> tuple[int, list[memory.NewMemory], list[MemoryThread]]:
        """Without a model, a session's observations become the deterministic builder's episodes."""
        assert batch is not None
        new = episodes.built(loom_id, run.params["thread_id"], batch.where, batch.actions, agent, run_id)
        return len(new), new, []

    made = asked(
        EXTRACTION, run, from_model, "extraction failed", without_model=None if batch is None else built
    )
    if made is None:
        return None
    found, new, ended = made
    with db.session() as s:
        loom = s.get_one(Loom, loom_id)  # looms are never deleted
        now = utcnow()
        threads, runs, proposed, superseded = [], [], 0, 0
        if loom.weaving_mode == SUGGEST:  # offered to the agent's session to weave, not written
            where = sessions.Where(run.params["thread_id"], run.params["run_id"], run.params["agent"])
            session = sessions.open_session(s, loom, where, now)
            proposed = sessions.propose(s, session, [extraction.proposal(item) for item in new], now)
        else:
            threads = [thread for item in new if (thread := memory.write(s, loom, item, now)) is not None]
            for thread in memory.still_live(s, [t.id for t in ended], now):
                if not thread.pinned:  # pinned since the prompt was written: the person's choice
                    memory.end(s, thread, now, now)
                    superseded += 1
            runs = [ledger.request(s, MEMORY_EMBEDDING, stored(t.row_id), t.digest[:16], {}) for t in threads]
        result = {
            "facts": found,
            "memories": len({t.id for t in threads}),
            "proposed": proposed,
            "superseded": superseded,
            "sent": len(sent),
        }
        if not committed(s, run, result=result):
            return None
    pending = [stored(r.id) for r in runs if r.status == "pending"]
    if pending:
        outbox.wake(MEMORY_EMBEDDING, pending)
    return None
