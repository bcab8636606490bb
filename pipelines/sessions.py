"""LoomSessions: one agent's time with a loom in one interaction run, on one conversation thread.

A session is opened by the first memory op that names it (``context.pack`` on the agent's first
turn, or any op that records what the agent was shown or touched) and is unique by (loom,
interaction run, agent). Appends move ``lastSequence``, ``lastTurnAt`` and ``awaitingNight`` on
(``models.queries.turns.APPEND_TURN``); the ops record thread ids into its lists (``record``); night
weaving consolidates it. Transcripts are not mined on their own: only a session's turns are."""

from dataclasses import dataclass, field
from datetime import datetime
from uuid import UUID, uuid4

from sqlalchemy import tuple_
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import Session, col, select

from models.memory import Loom, LoomSession, MemoryThread
from models.queries import memory as queries
from pipelines import looms, memory

# The lists a session records thread ids into (``record``).
LISTS = frozenset(
    {
        "tapestry_thread_ids",
        "suggested_thread_ids",
        "held_back_thread_ids",
        "cued_thread_ids",
        "held_thread_ids",
        "pending_gift_thread_ids",
        "recalled_thread_ids",
        "woven_thread_ids",
        "seen_thread_ids",
        "judged_thread_ids",
    }
)
# Recorded there, a thread is not known to the agent: held back (it never saw it), judged (night
# weaving's bookkeeping) or a gift not offered yet (it becomes known when offered).
UNSEEN = frozenset({"held_back_thread_ids", "judged_thread_ids", "pending_gift_thread_ids"})


@dataclass(frozen=True)
class Where:
    """What names a session in a request: the conversation thread, its run and the agent."""

    thread_id: str
    run_id: str | None
    agent: str


def open_session(s: Session, loom: Loom, where: Where, now: datetime) -> LoomSession:
    """The session, made on first use, locked for the caller's transaction."""
    interaction = looms.interaction_id(loom.namespace, where.thread_id, where.run_id)
    last, last_at = s.execute(
        queries.LAST_SEQUENCE,
        {"ns": loom.namespace, "thread": where.thread_id, "agent": where.agent, "run": where.run_id},
    ).one()
    s.exec(
        insert(LoomSession)
        .values(
            id=uuid4(),
            loom_id=loom.id,
            namespace=loom.namespace,
            thread_id=where.thread_id,
            run_id=where.run_id,
            tenant_id=looms.tenant_id(loom.namespace),
            interaction_process_id=interaction,
            agent_name=where.agent,
            agent_id=looms.agent_id(loom.namespace, where.agent),
            last_sequence=last,
            last_turn_at=last_at,
            awaiting_night=last > 0,
            date_created=now,
            date_updated=now,
        )
        .on_conflict_do_nothing(index_elements=["loom_id", "interaction_process_id", "agent_name"])
    )
    return s.exec(
        select(LoomSession)
        .where(
            col(LoomSession.loom_id) == loom.id,
            col(LoomSession.interaction_process_id) == interaction,
            col(LoomSession.agent_name) == where.agent,
        )
        .with_for_update()
    ).one()


def senders(s: Session, namespace: str, thread_id: str) -> list[str]:
    """The users who sent messages in the conversation thread (the first 32 by name): subjects of
    the interaction, for the tapestry."""
    return list(s.execute(queries.SENDERS, {"ns": namespace, "thread": thread_id}).scalars())


def record(s: Session, session: LoomSession, lists: dict[str, list[UUID]], now: datetime) -> None:
    """Add thread ids to the session's lists (each once, in order), and to ``known`` those the
    agent was shown or touched."""
    touched = False
    for name, ids in lists.items():
        if name not in LISTS:
            raise ValueError(f"{name} is not a list of thread ids of a session")
        held = getattr(session, name)
        added = [i for i in dict.fromkeys(ids) if i not in held]
        if added:
            setattr(session, name, [*held, *added])
            touched = True
    known = [
        i
        for name, ids in lists.items()
        if name not in UNSEEN
        for i in ids
        if i not in session.known_thread_ids
    ]
    if known:
        session.known_thread_ids = [*session.known_thread_ids, *dict.fromkeys(known)]
    if touched or known:
        session.date_updated = now
        s.add(session)


def propose(s: Session, session: LoomSession, proposals: list[dict], now: datetime) -> int:
    """Add proposed threads (the seed's ProposedThread objects) to the session's pending
    proposals, a text already pending once; how many were added."""
    pending = {proposal["content"] for proposal in session.pending_proposals}
    added = [p for p in proposals if p["content"] not in pending]
    if added:
        session.pending_proposals = [*session.pending_proposals, *added]
        session.date_updated = now
        s.add(session)
    return len(added)


def record_in(
    s: Session, loom: Loom, where: Where | None, lists: dict[str, list[UUID]], now: datetime
) -> None:
    """Record into the session ``where`` names, opened if new; nothing when it names none."""
    if where is not None:
        record(s, open_session(s, loom, where, now), lists, now)


@dataclass(frozen=True)
class Used:
    """Threads an agent recalled, saw, held or wove where no op could name its session."""

    recalled: list[UUID]
    seen: list[UUID]
    held: list[UUID]
    woven: list[UUID] = field(default_factory=list)


def record_used(s: Session, loom: Loom, where: Where, used: Used, now: datetime) -> tuple[LoomSession, int]:
    """Record into the session ``where`` names (opened if new) those of the ids that are live
    threads of the loom, skipping any other: recalled, seen, held as memory.pin records it (held
    and woven), and woven (a thread the agent set). The session, and how many ids were recorded (list
    by list)."""
    live = memory.live_of(s, loom.id, [*used.recalled, *used.seen, *used.held, *used.woven], now)
    kept = ([i for i in dict.fromkeys(ids) if i in live] for ids in vars(used).values())
    recalled, seen, held, woven = kept
    session = open_session(s, loom, where, now)
    lists = {
        "recalled_thread_ids": recalled,
        "seen_thread_ids": seen,
        "held_thread_ids": held,
        "woven_thread_ids": list(dict.fromkeys([*held, *woven])),
    }
    record(s, session, lists, now)
    return session, len(recalled) + len(seen) + len(held) + len(woven)


def held_in_conversation(
    s: Session, namespace: str, thread_id: str, agent: str, now: datetime
) -> list[MemoryThread]:
    """The memory threads the agent's sessions on the conversation hold (pinned in them), still
    live, oldest session first: what a summary of the conversation must put back."""
    held = s.exec(
        select(col(LoomSession.held_thread_ids))
        .where(
            col(LoomSession.namespace) == namespace,
            col(LoomSession.thread_id) == thread_id,
            col(LoomSession.agent_name) == agent,
        )
        .order_by(col(LoomSession.date_created))
    ).all()
    return memory.still_live(s, [i for ids in held for i in ids], now)


def give(s: Session, loom: Loom, to: Where, thread_id: UUID, now: datetime) -> LoomSession:
    """The thread waits as a gift in the receiving agent's session (``to``) until its next
    context.pack offers it; that session."""
    receiver = open_session(s, loom, to, now)
    record(s, receiver, {"pending_gift_thread_ids": [thread_id]}, now)
    return receiver


def offer(s: Session, session: LoomSession, now: datetime) -> tuple[list[MemoryThread], list[dict]]:
    """What waits for the session, offered once: the gifts still live, and the pending proposals;
    the session then knows the gifts and holds neither list."""
    gifts = memory.still_live(s, session.pending_gift_thread_ids, now)
    proposals = list(session.pending_proposals)
    if session.pending_gift_thread_ids or proposals:
        offered = [thread.id for thread in gifts]
        session.known_thread_ids = [
            *session.known_thread_ids,
            *(i for i in offered if i not in session.known_thread_ids),
        ]
        session.pending_gift_thread_ids, session.pending_proposals = [], []
        session.date_updated = now
        s.add(session)
    s.flush()
    return gifts, proposals


def page(
    s: Session,
    loom_id: UUID,
    agent_name: str | None,
    awaiting_night: bool | None,
    before: tuple[datetime, UUID] | None,
    limit: int,
) -> list[LoomSession]:
    """The loom's sessions, newest first, of the agent and night state named, from ``before``
    (a session's date_created and id) on."""
    query = select(LoomSession).where(col(LoomSession.loom_id) == loom_id)
    if agent_name is not None:
        query = query.where(col(LoomSession.agent_name) == agent_name)
    if awaiting_night is not None:
        query = query.where(col(LoomSession.awaiting_night) == awaiting_night)
    if before is not None:
        query = query.where(tuple_(col(LoomSession.date_created), col(LoomSession.id)) < tuple_(*before))
    order = (col(LoomSession.date_created).desc(), col(LoomSession.id).desc())
    return list(s.exec(query.order_by(*order).limit(limit)))
