"""The periodic passes and the night weavings: ``passes.list``, ``passes.run`` and
``night_weaving.list``, as ``loom passes`` and ``loom night-weave`` have them.

A pass fires across every namespace, so the registry serves these ops only to a token for every
namespace: viewer to read, admin to fire one."""

from pydantic import Field

from models.base import utcnow
from ops.caller import Caller
from ops.errors import OpError, invalid
from ops.schemas import Answer, Moment, OperatorRequest
from pipelines import passes as records
from schedules.record import PassBusy, fire
from schedules.registry import next_due, passes


class PassesRequest(OperatorRequest):
    pass


class PassRow(Answer):
    name: str = Field(description="The pass's name (what passes.run takes).")
    trigger: str = Field(
        description="When the scheduler fires it: a crontab with its time zone, or every N s, min or h."
    )
    next_at: Moment | None = Field(
        default=None,
        description=(
            "When it next falls due: a cron's next time; an interval's after its last firing (null before "
            "one: the scheduler counts from its own start)."
        ),
    )
    started_at: Moment | None = Field(description="When its last firing started; null if it never fired.")
    finished_at: Moment | None = Field(
        description="When its last firing finished; null while it runs or if it never fired."
    )
    sent: int | None = Field(description="How many runs its last firing requested.")
    by: str | None = Field(description="Who fired it last: scheduler or operator.")
    error: str | None = Field(description="The last firing's error, if it failed.")


class PassesAnswer(Answer):
    passes: list[PassRow] = Field(description="Each periodic pass with its trigger and its last firing.")


def list_passes(caller: Caller, req: PassesRequest) -> PassesAnswer:
    """List the periodic passes, each with its trigger and its last firing.

    For an operator (a token of every namespace)."""
    last = records.last_firings()
    now = utcnow()
    rows = []
    for name, p in passes().items():
        row = last.get(name)
        rows.append(
            PassRow(
                name=name,
                trigger=p.schedule,
                next_at=next_due(p.trigger, row.started_at if row else None, now),
                started_at=row.started_at if row else None,
                finished_at=row.finished_at if row else None,
                sent=row.sent if row else None,
                by=row.by if row else None,
                error=row.error if row else None,
            )
        )
    return PassesAnswer(passes=rows)


class PassRunRequest(OperatorRequest):
    name: str = Field(
        min_length=1, max_length=64, description="The pass to fire now (one of passes.list's names)."
    )


class PassRunAnswer(Answer):
    name: str = Field(description="The pass fired.")
    sent: int = Field(description="How many runs it requested.")


def run_pass(caller: Caller, req: PassRunRequest) -> PassRunAnswer:
    """Fire one periodic pass now, as `loom passes run`.

    It enqueues what it would on its schedule, recorded as the operator's. For an admin of every
    namespace.

    Errors: 422 for an unknown pass; 409 while another firing of it runs; 503 when the pass failed."""
    known = passes()
    if req.name not in known:
        raise invalid(f"name must be one of {', '.join(known)}", "name")
    try:
        sent = fire(known[req.name], by="operator")
    except PassBusy:
        raise OpError(409, f"the {req.name} pass is running now; try again when it has finished") from None
    except Exception as exc:  # noqa: BLE001 - recorded on the pass by fire; the caller gets why
        raise OpError(503, f"the {req.name} pass failed: {type(exc).__name__}: {exc}"[:500]) from exc
    return PassRunAnswer(name=req.name, sent=len(sent))


class NightsRequest(OperatorRequest):
    limit: int = Field(
        default=20,
        ge=1,
        le=100_000,
        description="How many night weavings to answer, newest first (1-100,000, default 20).",
    )


class NightRow(Answer):
    id: str = Field(description="The night weaving's id (a uuid).")
    loom_id: str | None = Field(description="The loom it wove, or null for every loom.")
    started_at: Moment = Field(description="When it started.")
    finished_at: Moment | None = Field(description="When its last run finished; null while runs are left.")
    sessions: int = Field(description="How many sessions it sent to be consolidated.")
    consolidated: int = Field(description="How many of them are consolidated so far.")
    episodes: int = Field(description="How many Episodic memory threads it wove.")
    judged: int = Field(description="How many suggested threads it judged used or unused.")
    used: int = Field(description="Of those judged, how many were used (the rest were unused).")
    by: str = Field(description="Who fired it: scheduler or operator.")


class NightsAnswer(Answer):
    nights: list[NightRow] = Field(description="The night weavings, newest first.")


def list_nights(caller: Caller, req: NightsRequest) -> NightsAnswer:
    """List the night weavings, newest first.

    Each with the sessions it sent and consolidated, the episodes it wove and the memory threads it
    judged. For an operator (a token of every namespace)."""
    return NightsAnswer(
        nights=[
            NightRow(
                id=str(w.id),
                loom_id=str(w.loom_id) if w.loom_id else None,
                started_at=w.started_at,
                finished_at=w.finished_at,
                sessions=w.sessions,
                consolidated=w.consolidated,
                episodes=w.episodes,
                judged=w.judged,
                used=w.used,
                by=w.by,
            )
            for w in records.night_weavings(req.limit)
        ]
    )
