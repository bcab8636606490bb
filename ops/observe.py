"""observe.record and observe.crystallize: a coding agent's tool actions, recorded by its hooks, and
made into Episodic memory threads of their session.

observe.record stores each action once (by the client's id for it, else by what it was and when):
the tool, a sha256 of its input, one line of what it did, the outcome, the files it touched and the
error, screened as turns are. observe.crystallize keeps the session's actions not crystallized yet
as evidence of the loom (``pipelines.episodes``: ``memory.recall`` finds them) and requests the
extraction stage's run for them; the worker writes the episodes, by the model or, without one, by
the deterministic builder. A crystallize with nothing new requests nothing. Like every write,
neither op calls a model."""

from typing import Annotated, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import func
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import col, select

from models import db
from models.base import utcnow
from models.observation import ERROR_MAX, FILE_MAX, FILES_MAX, SUMMARY_MAX, Observation
from models.stage_run import StageRun
from ops.caller import Caller
from ops.errors import invalid
from ops.memory import LoomOp, the_loom
from ops.runs import RunAnswer, run_public, started
from ops.schemas import Answer, OpRequest, SaidAt
from ops.waiting import Waiting
from pipelines import episodes, extraction, keys, screening
from workers.stages.extraction import EXTRACTION, request

BATCH_MAX = 200  # actions a record call carries
CRYSTALLIZE_MAX = 500  # actions a crystallize takes; the rest wait for the next one


class Action(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str | None = Field(default=None, min_length=1, max_length=128)  # the client's (a tool_use_id)
    tool: str = Field(min_length=1, max_length=128)
    input_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    summary: str = Field(min_length=1, max_length=SUMMARY_MAX, pattern=r"^[^\r\n]*$")
    outcome: Literal["ok", "error"] = "ok"
    files: list[Annotated[str, Field(min_length=1, max_length=FILE_MAX)]] = Field(
        default_factory=list, max_length=FILES_MAX
    )
    error: str | None = Field(default=None, max_length=ERROR_MAX)
    ts: SaidAt | None = None


class SessionScope(OpRequest):
    session_id: str = Field(min_length=1, max_length=256)


class RecordRequest(SessionScope):
    run_id: str | None = Field(default=None, min_length=1, max_length=256)
    user_id: str | None = Field(default=None, min_length=1, max_length=256)
    project: str | None = Field(default=None, min_length=1, max_length=128)
    branch: str | None = Field(default=None, min_length=1, max_length=128)
    actions: list[Action] = Field(min_length=1, max_length=BATCH_MAX)


class RecordAnswer(Answer):
    namespace: str
    session_id: str
    recorded: int  # new actions stored
    repeated: int  # already stored: sent again, nothing written
    high: int  # of those stored, the ones that read as high (kept, never sent to a model)


class CrystallizeRequest(SessionScope, LoomOp):
    run_id: str | None = Field(default=None, min_length=1, max_length=256)
    defer: bool = True  # false: wait for the episodes (at most wait_seconds)
    wait_seconds: float = Field(default=30, gt=0, le=120)


class CrystallizeAnswer(Answer):
    namespace: str
    loomId: UUID  # noqa: N815
    session_id: str
    actions: int  # taken by this crystallize
    remaining: int  # left for the next one (more than one crystallize takes)
    run: RunAnswer | None  # None when there was nothing new


def _key(action: Action, ts) -> str:
    return (
        action.id or "d-" + keys.digest(action.tool, action.input_sha256, action.summary, ts.isoformat())[:40]
    )


def record(caller: Caller, req: RecordRequest) -> RecordAnswer:
    namespace, now = caller.namespace(req.namespace), utcnow()
    rows = []
    for action in req.actions:
        ts = action.ts or now
        text = episodes.line(action.tool, action.summary, action.outcome, action.files, action.error)
        rows.append(
            {
                "namespace": namespace,
                "session_id": req.session_id,
                "action_key": _key(action, ts),
                "run_id": req.run_id,
                "agent": req.agent,
                "user_id": req.user_id,
                "project": req.project,
                "branch": req.branch,
                "tool": action.tool,
                "input_sha256": action.input_sha256,
                "summary": action.summary,
                "outcome": action.outcome,
                "files": action.files,
                "error": action.error,
                "sensitivity": screening.screen(text).level,
                "ts": ts,
                "created_at": now,
            }
        )
    if len({row["action_key"] for row in rows}) != len(rows):
        raise invalid("two actions share an id (or tool, input, summary and time, without one)", "actions")
    with db.session() as s:
        stored = s.exec(
            insert(Observation).values(rows).on_conflict_do_nothing().returning(Observation.sensitivity)
        ).all()
    return RecordAnswer(
        namespace=namespace,
        session_id=req.session_id,
        recorded=len(stored),
        repeated=len(rows) - len(stored),
        high=sum(1 for (level,) in stored if level == screening.HIGH),
    )


def crystallize(caller: Caller, req: CrystallizeRequest) -> CrystallizeAnswer | Waiting:
    now = utcnow()
    with db.session() as s:
        loom = the_loom(s, caller, req)
        of_session = (
            Observation.namespace == loom.namespace,
            Observation.session_id == req.session_id,
            col(Observation.crystallized_at).is_(None),
        )
        # Locked: two crystallizes of one session take each action once.
        taken = s.exec(
            select(Observation)
            .where(*of_session)
            .order_by(col(Observation.ts), col(Observation.id))
            .limit(CRYSTALLIZE_MAX)
            .with_for_update(skip_locked=True)
        ).all()
        remaining = s.exec(select(func.count()).where(*of_session)).one() - len(taken)
        if not taken:
            return CrystallizeAnswer(
                namespace=loom.namespace,
                loomId=loom.id,
                session_id=req.session_id,
                actions=0,
                remaining=remaining,
                run=None,
            )
        messages = [
            extraction.Message(
                role=episodes.ROLE,
                content=episodes.line(o.tool, o.summary, o.outcome, list(o.files), o.error),
                msg_id=episodes.msg_id(o.id),
                ts=o.ts,
                user_id=o.user_id,
            )
            for o in taken
        ]
        ids = extraction.keep(s, loom, req.session_id, req.run_id, req.agent, messages, now)
        for o in taken:
            o.crystallized_at = now
            s.add(o)
        run = request(s, loom, ids, req.session_id, req.agent, req.run_id, episodes=True)

    def answer(run: StageRun) -> CrystallizeAnswer:
        return CrystallizeAnswer(
            namespace=loom.namespace,
            loomId=loom.id,
            session_id=req.session_id,
            actions=len(taken),
            remaining=remaining,
            run=run_public(run),
        )

    return started(EXTRACTION.name, run, not req.defer, req.wait_seconds, answer)
