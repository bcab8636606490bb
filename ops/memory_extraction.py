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
from sqlmodel import col, select

from models import db
from models.base import utcnow
from models.memory import MemoryEvidence
from models.stage_run import StageRun
from ops.caller import Caller
from ops.errors import invalid
from ops.memory import SessionOp, the_loom
from ops.runs import RunAnswer, run_public, started
from ops.schemas import Answer, Moment, SaidAt
from ops.waiting import Waiting
from pipelines import extraction, keys, screening
from pipelines.excerpts import around
from workers.stages.extraction import EXTRACTION, request


class MessageIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant", "system", "tool"]
    content: str = Field(min_length=1, max_length=100_000)
    msg_id: str | None = Field(default=None, min_length=1, max_length=128)
    ts: SaidAt | None = None
    user_id: str | None = Field(default=None, min_length=1, max_length=256)


class SetFromMessagesRequest(SessionOp):
    thread_id: str = Field(min_length=1, max_length=256)  # the conversation the messages are of
    messages: list[MessageIn] = Field(min_length=1, max_length=500)
    defer: bool = True  # false: wait for the extraction's outcome (at most wait_seconds)
    wait_seconds: float = Field(default=30, gt=0, le=120)


class SetFromMessagesAnswer(Answer):
    namespace: str
    loomId: UUID  # noqa: N815
    evidence: int  # the messages kept as evidence
    run: RunAnswer


def set_from_messages(caller: Caller, req: SetFromMessagesRequest) -> SetFromMessagesAnswer | Waiting:
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

    return started(EXTRACTION.name, run, not req.defer, req.wait_seconds, answer)


class RecallRequest(SessionOp):
    query: str | None = Field(default=None, min_length=1, max_length=4000)
    since: datetime | None = None
    until: datetime | None = None
    limit: int = Field(default=20, ge=1, le=100)


class Recalled(Answer):
    id: int
    thread_id: str
    msg_id: str
    role: str
    agent: str
    ts: Moment
    score: float | None
    excerpt: str


class RecallAnswer(Answer):
    namespace: str
    loomId: UUID  # noqa: N815
    mode: Literal["lexical", "time"]
    hits: list[Recalled]


EXCERPT_CHARS = 400


def recall(caller: Caller, req: RecallRequest) -> RecallAnswer:
    """The evidence extraction read, by its words or its time (a message that reads as high is
    never returned)."""
    if req.since and req.until and req.since > req.until:
        raise invalid("since is after until", "since")
    with db.session() as s:
        loom = the_loom(s, caller, req)
        scores: dict[int, float] = {}
        if req.query:
            scored = extraction.recalled(
                s, loom.id, req.query, req.since, req.until, req.thread_id, req.limit
            )
            scores = {x.id: x.score for x in scored}
            rows = {
                e.id: e
                for e in s.exec(select(MemoryEvidence).where(col(MemoryEvidence.id).in_(list(scores))))
            }
            found = [rows[i] for i in scores]
        else:
            query = select(MemoryEvidence).where(
                MemoryEvidence.loom_id == loom.id, MemoryEvidence.sensitivity != screening.HIGH
            )
            if req.since is not None:
                query = query.where(MemoryEvidence.ts >= req.since)
            if req.until is not None:
                query = query.where(MemoryEvidence.ts <= req.until)
            if req.thread_id is not None:
                query = query.where(MemoryEvidence.thread_id == req.thread_id)
            found = list(
                s.exec(query.order_by(col(MemoryEvidence.ts), col(MemoryEvidence.id)).limit(req.limit))
            )
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
                    score=scores.get(e.id),
                    excerpt=around(e.content, req.query or "", EXCERPT_CHARS),
                )
                for e in found
            ],
        )
