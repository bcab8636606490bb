"""The reflection stage: the prose of a memory.reflect answer, written by the model from the threads
the reflection drew on (``pipelines.reflecting``). The op asks for the run and waits on it a bounded
time (endpoints never call a model); the run's subject is the first thread cited, its version the
digest of the question, the threads (their texts' digests) and the knots and tensions, so the same
reflection asked again is the same run and its answer is not asked for twice.

The threads are read again here and screened with this build's rules: one cut, past its ``until``
or reading as high since is not sent. The answer is screened too: one that reads as high is
dropped (the run is skipped, and the op answers with the deterministic builder's)."""

from uuid import UUID

from sqlmodel import Session

from models import db
from models.base import stored, utcnow
from models.memory import Loom
from models.settings import get_settings
from models.stage_run import SKIPPED, StageRun
from models.stages import REFLECTION
from pipelines import keys, memory, reflecting, screening
from providers import llm
from workers import ledger
from workers.asking import asked, committed
from workers.bodies import close, one_at_a_time
from workers.stages import register


def reflect(run_ids: list[int]) -> None:
    one_at_a_time(REFLECTION, run_ids, _work)


register(REFLECTION, reflect)


def request(s: Session, loom: Loom, question: str, drawn: reflecting.Drawn) -> StageRun:
    """The run that writes the answer's prose for what ``drawn`` holds (cited threads first)."""
    threads = drawn.shown
    related = reflecting.relations(drawn)
    params = {
        "loom_id": str(loom.id),
        "question": question,
        "threads": [str(t.id) for t in threads],
        "related": related,
    }
    version = keys.digest(question, *(f"{t.id}:{t.digest}" for t in threads), *related)[:16]
    return ledger.request(s, REFLECTION, stored(threads[0].row_id), version, params, revive=True)


def _work(run: StageRun) -> None:
    ids = [UUID(i) for i in run.params["threads"]]
    with db.session() as s:
        live = {t.id: t for t in memory.still_live(s, ids, utcnow())}
    threads = reflecting.readable([live[i] for i in ids if i in live])
    if not threads:
        return close(run, SKIPPED, reason="nothing-to-send")
    budget = get_settings().llm_prompt_max_chars - len(reflecting.INSTRUCTIONS) - 200
    prompt = reflecting.prompt(run.params["question"], threads, run.params["related"], budget)
    if screening.is_high(prompt):  # each thread passed; together they read as high
        return close(run, SKIPPED, reason="prompt-high-sensitivity")
    answer = asked(
        REFLECTION,
        run,
        lambda: llm.get_llm().ask(reflecting.Reflected, reflecting.INSTRUCTIONS, prompt),
        "reflection failed",
    )
    if answer is None:
        return None
    text = answer.answer.strip()
    if screening.is_high(text):
        return close(run, SKIPPED, reason="answer-high-sensitivity")
    with db.session() as s:
        committed(s, run, result={"answer": text, "sent": len(threads)})
    return None
