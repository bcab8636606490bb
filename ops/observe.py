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

from models import db
from models.base import utcnow
from models.observation import ERROR_MAX, FILE_MAX, FILES_MAX, SUMMARY_MAX
from models.stage_run import StageRun
from models.stages import EXTRACTION
from ops.caller import Caller
from ops.errors import invalid
from ops.schemas import ActedIn, Answer, OpRequest, SaidAt
from ops.schemas.memory import LoomOp, SessionRun, the_loom
from ops.schemas.runs import RunAnswer, run_public
from ops.waiting import Waiting, started
from pipelines import observations, screening
from workers.stages.extraction import request

BATCH_MAX = 200  # actions a record call carries


class Action(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str | None = Field(
        default=None,
        min_length=1,
        max_length=128,
        description=(
            "The client's id for the action (e.g. Claude Code's tool_use_id, at most 128 characters); a "
            "digest of the action and its time when omitted. The same id again stores nothing."
        ),
    )
    tool: str = Field(min_length=1, max_length=128, description="The tool's name (1-128 characters).")
    input_sha256: str = Field(
        pattern=r"^[0-9a-f]{64}$", description="The sha256 of the tool's input, as 64 lowercase hex digits."
    )
    summary: str = Field(
        min_length=1,
        max_length=SUMMARY_MAX,
        pattern=r"^[^\r\n]*$",
        description="One line of what it did (the command, or the file path), at most 200 characters.",
    )
    outcome: Literal["ok", "error"] = Field(default="ok", description="ok (default) or error.")
    files: list[Annotated[str, Field(min_length=1, max_length=FILE_MAX)]] = Field(
        default_factory=list,
        max_length=FILES_MAX,
        description="The files it touched (at most 32 paths of at most 512 characters).",
    )
    error: str | None = Field(
        default=None,
        max_length=ERROR_MAX,
        description="The error it gave, if any (at most 2,000 characters).",
    )
    ts: SaidAt | None = Field(default=None, description="When it happened, with its UTC offset.")


class SessionScope(OpRequest):
    session_id: str = Field(
        min_length=1,
        max_length=256,
        description="The coding session the actions belong to (1-256 characters).",
    )


class RecordRequest(SessionScope):
    run_id: SessionRun = None
    user_id: str | None = Field(
        default=None, min_length=1, max_length=256, description="The end user the session works for."
    )
    project: str | None = Field(
        default=None, min_length=1, max_length=128, description="The project the session works in."
    )
    branch: str | None = Field(
        default=None, min_length=1, max_length=128, description="The branch the session works on."
    )
    actions: list[Action] = Field(
        min_length=1, max_length=BATCH_MAX, description="The tool actions to record (1-200)."
    )


class RecordAnswer(Answer):
    namespace: ActedIn
    session_id: str = Field(description="The session recorded.")
    recorded: int = Field(description="New actions stored.")
    repeated: int = Field(description="Actions already stored (sent again): nothing written.")
    high: int = Field(
        description=(
            "Of those recorded, the actions that read as high: kept, but never sent to a model nor written "
            "into a memory."
        )
    )


class CrystallizeRequest(SessionScope, LoomOp):
    run_id: SessionRun = None
    defer: bool = Field(
        default=True,
        description=(
            "true (default): answer with the run at once; false: wait for the episodes (at most "
            "wait_seconds)."
        ),
    )
    wait_seconds: float = Field(
        default=30,
        gt=0,
        le=120,
        description="How long to wait when defer is false (at most 120 s, default 30).",
    )


class CrystallizeAnswer(Answer):
    namespace: ActedIn
    loomId: UUID = Field(description="The loom the episodes go to.")  # noqa: N815
    session_id: str = Field(description="The session crystallized.")
    actions: int = Field(description="How many actions this crystallize took (at most 500).")
    remaining: int = Field(description="How many are left for the next crystallize.")
    run: RunAnswer | None = Field(
        description="The extraction run writing the episodes; null when nothing was new."
    )


def record(caller: Caller, req: RecordRequest) -> RecordAnswer:
    """Record a coding agent's tool actions (observations).

    Up to 200 a call, each with the tool, a hash of its input, one line of what it did, its outcome,
    the files it touched and its error. Once per session and action: an action sent again
    (`repeated`) writes nothing. Each is screened; one that reads as high is kept but never sent to a
    model.

    Errors: 422 for two actions of a call sharing an id."""
    namespace, now = caller.namespace(req.namespace), utcnow()
    origin = observations.Origin(
        namespace, req.session_id, req.run_id, req.agent, req.user_id, req.project, req.branch
    )
    actions = [
        observations.Action(
            a.id, a.tool, a.input_sha256, a.summary, a.outcome, list(a.files), a.error, a.ts or now
        )
        for a in req.actions
    ]
    rows = observations.rows(origin, actions, now)
    if len({row["action_key"] for row in rows}) != len(rows):
        raise invalid("two actions share an id (or tool, input, summary and time, without one)", "actions")
    with db.session() as s:
        stored = observations.store(s, rows)
    return RecordAnswer(
        namespace=namespace,
        session_id=req.session_id,
        recorded=len(stored),
        repeated=len(rows) - len(stored),
        high=sum(1 for level in stored if level == screening.HIGH),
    )


def crystallize(caller: Caller, req: CrystallizeRequest) -> CrystallizeAnswer | Waiting[CrystallizeAnswer]:
    """Turn a session's recorded actions into Episodic memory threads.

    Takes the actions not crystallized yet (500 at a time: `remaining` says how many wait), keeps them
    as evidence and requests an extraction run, which writes the episodes worth remembering (the
    deterministic builder writes them when there is no model). Answers the run at once, or
    (`defer: false`) once it is done.

    Errors: 404 for a loom not in this namespace."""
    now = utcnow()
    with db.session() as s:
        loom = the_loom(s, caller, req)
        taken = observations.take(s, loom, req.session_id, req.run_id, req.agent, now)
        if not taken.actions:
            return CrystallizeAnswer(
                namespace=loom.namespace,
                loomId=loom.id,
                session_id=req.session_id,
                actions=0,
                remaining=taken.remaining,
                run=None,
            )
        run = request(s, loom, taken.evidence_ids, req.session_id, req.agent, req.run_id, episodes=True)

    def answer(run: StageRun) -> CrystallizeAnswer:
        return CrystallizeAnswer(
            namespace=loom.namespace,
            loomId=loom.id,
            session_id=req.session_id,
            actions=taken.actions,
            remaining=taken.remaining,
            run=run_public(run),
        )

    return started(EXTRACTION, run, not req.defer, req.wait_seconds, answer)
