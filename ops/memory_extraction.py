"""memory.set_from_messages and memory.recall: turning messages into memories in the worker, and
reading back the messages extraction read.

set_from_messages keeps every message as evidence at once (whether or not the namespace records
transcripts) and requests the extraction run; ``defer: true`` answers with the run straight away,
``defer: false`` waits a bounded time for its outcome. Either way the model is asked by the worker,
never by the op. memory.recall searches that evidence: by BM25 over its words, and by a time
window, in time order, when it has no query."""

from datetime import datetime
from typing import Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from models import db
from models.base import utcnow
from models.stage_run import StageRun
from models.stages import EXTRACTION
from ops.caller import Caller
from ops.errors import invalid
from ops.schemas import ActedIn, Answer, Moment, SaidAt
from ops.schemas.memory import SessionOp, the_loom
from ops.schemas.runs import RunAnswer, run_public
from ops.waiting import Waiting, started
from pipelines import extraction, keys
from pipelines.excerpts import around
from workers.stages.extraction import request


class MessageIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant", "system", "tool"] = Field(
        description="Who said it: user, assistant, system or tool."
    )
    content: str = Field(
        min_length=1, max_length=100_000, description="The message's text (1-100,000 characters)."
    )
    msg_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=128,
        description=(
            "The message's id in the conversation (unique in the batch); derived from role and content when "
            "omitted."
        ),
    )
    ts: SaidAt | None = Field(default=None, description="When it was said, with its UTC offset.")
    user_id: str | None = Field(
        default=None, min_length=1, max_length=256, description="The end user who said it or was answered."
    )


class SetFromMessagesRequest(SessionOp):
    thread_id: str = Field(
        min_length=1,
        max_length=256,
        description="The conversation the messages are of (names the session that proposals go to).",
    )
    messages: list[MessageIn] = Field(
        min_length=1, max_length=500, description="The messages to remember from (1-500), kept as evidence."
    )
    defer: bool = Field(
        default=True,
        description=(
            "true (default): answer with the extraction run at once; false: wait for it (at most "
            "wait_seconds)."
        ),
    )
    wait_seconds: float = Field(
        default=30,
        gt=0,
        le=120,
        description="How long to wait for the run when defer is false (at most 120 s, default 30).",
    )


class SetFromMessagesAnswer(Answer):
    namespace: ActedIn
    loomId: UUID = Field(description="The loom the facts go to.")  # noqa: N815
    evidence: int = Field(description="How many messages were kept as evidence.")
    run: RunAnswer = Field(
        description="The extraction run; its result counts facts, memories and the lines sent."
    )


def set_from_messages(
    caller: Caller, req: SetFromMessagesRequest
) -> SetFromMessagesAnswer | Waiting[SetFromMessagesAnswer]:
    """Remember what matters in a batch of messages (LLM extraction).

    Keeps the messages as evidence and requests one extraction run: the LLM picks the facts worth
    remembering and writes them as memory threads citing their evidence (or, in a `Suggest` loom,
    proposes them to the session). The same messages again are the same run. Answers the run at once,
    or (`defer: false`) once it is done. Without an LLM provider the run is skipped and the evidence
    stays (memory.recall reads it).

    Errors: 422 for two messages sharing a msg_id; 404 for a loom not in this namespace."""
    now = utcnow()
    messages = [
        extraction.Message(
            role=m.role,
            content=m.content,
            msg_id=m.msg_id or keys.derived_msg_id(req.thread_id, m.role, m.content),
            ts=m.ts or now,
            user_id=m.user_id,
        )
        for m in req.messages
    ]
    if len({m.msg_id for m in messages}) != len(messages):
        raise invalid("two messages share a msg_id (or role and content, when it is not given)", "messages")
    with db.session() as s:
        loom = the_loom(s, caller, req)
        ids = extraction.keep(s, loom, req.thread_id, req.run_id, req.agent, messages, now)
        run = request(s, loom, ids, req.thread_id, req.agent, req.run_id)

    def answer(run: StageRun) -> SetFromMessagesAnswer:
        return SetFromMessagesAnswer(
            namespace=loom.namespace, loomId=loom.id, evidence=len(ids), run=run_public(run)
        )

    return started(EXTRACTION, run, not req.defer, req.wait_seconds, answer)


class RecallRequest(SessionOp):
    query: str | None = Field(
        default=None,
        min_length=1,
        max_length=4000,
        description=(
            "Words to find in the evidence by BM25 (1-4,000 characters); without one, the evidence in time "
            "order."
        ),
    )
    since: datetime | None = Field(default=None, description="Only evidence said at or after this time.")
    until: datetime | None = Field(default=None, description="Only evidence said at or before this time.")
    limit: int = Field(
        default=20, ge=1, le=100, description="How many messages to answer (1-100, default 20)."
    )


class Recalled(Answer):
    id: int = Field(description="The evidence row's id.")
    thread_id: str = Field(description="The conversation it is from.")
    msg_id: str = Field(description="Its message id there.")
    role: str = Field(description="Who said it.")
    agent: str = Field(description="The agent that handed it over.")
    ts: Moment = Field(description="When it was said.")
    score: float | None = Field(description="Its BM25 score (with a query); null in time order.")
    excerpt: str = Field(description="A piece of its text around the match.")


class RecallAnswer(Answer):
    namespace: ActedIn
    loomId: UUID = Field(description="The loom whose evidence was read.")  # noqa: N815
    mode: Literal["lexical", "time"] = Field(
        description="lexical (a query was given) or time (in time order)."
    )
    hits: list[Recalled] = Field(description="The evidence found, never a message that reads as high.")


EXCERPT_CHARS = 400


def recall(caller: Caller, req: RecallRequest) -> RecallAnswer:
    """Read the evidence extraction was given, by its words or by time.

    BM25 over the loom's evidence with a `query`, or the evidence of a time window in time order
    without one, each with an excerpt around the match; never a message that reads as high.

    Errors: 422 when `since` is after `until`; 404 for a loom not in this namespace."""
    if req.since and req.until and req.since > req.until:
        raise invalid("since is after until", "since")
    with db.session() as s:
        loom = the_loom(s, caller, req)
        window = extraction.Window(req.since, req.until, req.thread_id)
        found = extraction.recall(s, loom.id, req.query, window, req.limit)
        return RecallAnswer(
            namespace=loom.namespace,
            loomId=loom.id,
            mode="lexical" if req.query else "time",
            hits=[
                Recalled(
                    id=e.id,
                    thread_id=e.thread_id,
                    msg_id=e.msg_id,
                    role=e.role,
                    agent=e.agent,
                    ts=e.ts,
                    score=score,
                    excerpt=around(e.content, req.query or "", EXCERPT_CHARS),
                )
                for e, score in found
            ],
        )
