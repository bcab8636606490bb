"""memory.reflect: a question in; the threads it draws on, the knots and tensions among them
(``pipelines.reflecting``), and an answer. Naming a session records the cited threads as recalled
and those the knots and tensions show as seen.

With a model configured the answer's prose is the model's, written by the ``reflection`` stage
from the screened threads (endpoints never call a model): the op asks for the run and waits for it
a bounded time, without holding a request thread (``ops.waiting``), as session.brief_save does.
Without one, or when the model cannot answer in time or at all, the deterministic builder answers
with the threads and the knots and tensions alone, and ``reason`` says why."""

from typing import Literal
from uuid import UUID

from pydantic import ConfigDict, Field

from models import db
from models.base import stored, utcnow
from models.stage_run import PENDING, RUNNING, SUCCEEDED
from models.stages import REFLECTION
from ops.caller import Caller
from ops.schemas import ActedIn, Answer, Moment
from ops.schemas.memory import SessionOp, ThreadShape, shown, the_loom, where
from ops.waiting import Waiting, Watch
from pipelines import hybrid, reflecting, screening, sessions
from providers import llm
from workers import ledger, outbox
from workers.stages.reflection import request

Reason = Literal[
    "no-llm-provider",
    "nothing-found",
    "question-high-sensitivity",
    "pending",
    "model-failed",
    "prompt-high-sensitivity",
    "answer-high-sensitivity",
]


class ReflectRequest(SessionOp):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"question": "When does Ana deploy?", "thread_id": "chat-42"}]}
    )

    question: str = Field(
        min_length=1,
        max_length=2_000,
        description="The question or topic to reflect on (1-2,000 characters).",
    )
    limit: int = Field(
        default=8, ge=1, le=20, description="How many threads to cite at most (1-20, default 8)."
    )
    wait_seconds: float = Field(
        default=30,
        ge=0,
        le=120,
        description=(
            "With a model: how long to wait for its answer (0-120 s, default 30); past it the threads answer "
            "(reason pending)."
        ),
    )


class Knot(Answer):
    shares: reflecting.Shares = Field(
        description="What ties the threads: a subject, a cue or an evidence id."
    )
    value: str = Field(description="The subject or cue (as first spelled), or the evidence id.")
    threads: list[UUID] = Field(description="The threads it ties (two or more, one of them cited).")


class Tension(Answer):
    type: reflecting.TensionType = Field(
        description=(
            "supersedes: the newer thread says the same thing differently, and wins; differs: both said at "
            "once; expired: the older one's `until` has passed."
        )
    )
    threads: list[UUID] = Field(description="The two threads, the older first.")
    newer: UUID = Field(description="The newer of the two (the live one, when the other expired).")
    subject: str = Field(description="The subject both are about.")
    kind: str = Field(description="The kind both are (Semantic or Procedural).")
    until: Moment | None = Field(description="When the expired one stopped being true (expired only).")


class ReflectAnswer(Answer):
    namespace: ActedIn
    loomId: UUID = Field(description="The loom reflected on.")  # noqa: N815
    session: UUID | None = Field(description="The session recorded into, when the request named one.")
    answer: str = Field(
        description=(
            "The answer: the model's prose citing [t:xxxxxxxx] ids (by model), or the threads, knots and "
            "tensions as lines (by threads); empty when nothing was found."
        )
    )
    by: Literal["model", "threads"] = Field(description="Who wrote the answer: the model or the builder.")
    reason: Reason | None = Field(description="Why the builder answered, when a model is configured or not.")
    cited: list[UUID] = Field(description="The threads the answer draws on (recorded as recalled).")
    seen: list[UUID] = Field(description="The live threads the knots and tensions show (recorded as seen).")
    threads: list[ThreadShape] = Field(description="The cited threads, then the neighbours shown.")
    knots: list[Knot] = Field(description="Threads that bear on each other, and what they share.")
    tensions: list[Tension] = Field(description="Threads that disagree, and which is newer.")
    withheld: int = Field(description="Threads left out because their text reads as high.")
    run_id: int | None = Field(description="The reflection run that writes the model's answer, if asked for.")


def reflect(caller: Caller, req: ReflectRequest) -> ReflectAnswer | Waiting[ReflectAnswer]:
    """Reflect on a question: the threads it draws on, their knots and their tensions.

    The loom's hybrid search finds the threads the question draws on (cited); their neighbours share
    a subject, a cue or an evidence; knots are what ties them, tensions are threads that disagree (a
    newer one superseding an older, two at once, an `until` passed). With a model configured it
    writes the answer from those threads (never one that reads as high), waited for up to
    `wait_seconds`; without one the answer is the threads, knots and tensions as lines. Naming a
    session records the cited threads as recalled and the ones shown as seen.

    Errors: 404 for a loom not in this namespace."""
    clock = hybrid.Clock()
    q = hybrid.query(req.question, "hybrid", req.limit, hybrid.LEXICAL_WEIGHT, clock)
    high = screening.is_high(req.question)
    with db.session() as s:
        loom = the_loom(s, caller, req)
        now = utcnow()
        drawn = reflecting.gather(s, loom.id, q, clock, now)
        named = where(req)
        session = None if named is None else sessions.open_session(s, loom, named, now)
        if session is not None:
            lists = {"recalled_thread_ids": [t.id for t in drawn.cited], "seen_thread_ids": drawn.seen}
            sessions.record(s, session, lists, now)
        built = _answer(loom.namespace, loom.id, session.id if session else None, drawn)
        reason: Reason | None = (
            "nothing-found" if not drawn.cited else "question-high-sensitivity" if high else None
        )
        if reason is not None or not llm.configured():
            return built.model_copy(update={"reason": reason or llm.NO_PROVIDER_REASON})
        run = request(s, loom, req.question, drawn)
        run_id = stored(run.id)
        status = run.status
    if status == PENDING:
        outbox.wake(REFLECTION, [run_id])
    return _waited(built.model_copy(update={"run_id": run_id}), run_id, req.wait_seconds)


def _answer(namespace: str, loom_id: UUID, session: UUID | None, drawn: reflecting.Drawn) -> ReflectAnswer:
    """The deterministic builder's answer."""
    return ReflectAnswer(
        namespace=namespace,
        loomId=loom_id,
        session=session,
        answer=reflecting.built(drawn),
        by="threads",
        reason=None,
        cited=[t.id for t in drawn.cited],
        seen=drawn.seen,
        threads=[shown(t) for t in drawn.shown],
        knots=[Knot(shares=k.shares, value=k.value, threads=list(k.threads)) for k in drawn.knots],
        tensions=[
            Tension(
                type=t.type,
                threads=list(t.threads),
                newer=t.newer,
                subject=t.subject,
                kind=t.kind,
                until=t.until,
            )
            for t in drawn.tensions
        ],
        withheld=drawn.withheld,
        run_id=None,
    )


def _waited(built: ReflectAnswer, run_id: int, seconds: float) -> Waiting[ReflectAnswer]:
    """The model's answer once its run is done, or the builder's (with why) when it is not."""

    def check(final: bool) -> ReflectAnswer | Watch:
        run = ledger.get(run_id)
        assert run is not None  # runs are not deleted
        if run.status in (PENDING, RUNNING) and not final:
            return Watch(frozenset({run_id}))
        prose = (run.result or {}).get("answer") if run.status == SUCCEEDED else None
        if prose and not screening.is_high(prose):
            return built.model_copy(update={"answer": prose, "by": "model"})
        reason = {PENDING: "pending", RUNNING: "pending", SUCCEEDED: "answer-high-sensitivity"}.get(
            run.status
        )
        return built.model_copy(update={"reason": reason or _skipped(run.reason)})

    return Waiting(check, seconds)


def _skipped(reason: str | None) -> Reason:
    known: dict[str | None, Reason] = {
        "prompt-high-sensitivity": "prompt-high-sensitivity",
        "answer-high-sensitivity": "answer-high-sensitivity",
        llm.NO_PROVIDER_REASON: "no-llm-provider",
        "nothing-to-send": "nothing-found",
    }
    return known.get(reason, "model-failed")
