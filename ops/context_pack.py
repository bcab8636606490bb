"""context.pack: the memory to put in an agent's context. It opens the agent's session (by
thread, run and agent), weaves its tapestry on the first call (``pipelines.tapestry``, within a
budget of tokens), offers once what waits for it (``pipelines.sessions.offer``: gifts, proposals),
answers the threads the session holds (pinned in it: what a compacted conversation must get back)
and, for a (user, session) scope, brings the user's working memory."""

from typing import Annotated

from pydantic import ConfigDict, Field

from models import db
from models.base import utcnow
from models.settings import get_settings
from ops.caller import Caller
from ops.errors import invalid
from ops.schemas import ActedIn, Answer
from ops.schemas.memory import (
    BlockAnswer,
    BlockName,
    LoomOp,
    ProposedThread,
    SessionObject,
    ThreadShape,
    block_answer,
    proposed,
    session_object,
    shown,
    the_loom,
)
from pipelines import memory, sessions, tapestry, working_memory


class PackRequest(LoomOp):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"thread_id": "support-4711", "run_id": "run-2026-12-01-a", "subjects": ["customer-42"]}
            ]
        }
    )

    thread_id: str = Field(
        min_length=1,
        max_length=256,
        description="The conversation the agent is in: names its session (1-256 characters).",
    )
    run_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=256,
        description="The interaction run the agent is in (its session is per run).",
    )
    # The interaction's subject inputs; whoever sent messages in the thread is added.
    subjects: list[str] = Field(
        default_factory=list,
        max_length=32,
        description=(
            "Whom or what the interaction is about (at most 32, each 1-200 characters); whoever sent "
            "messages in the thread is added."
        ),
    )
    # A (user, session) scope (the SDK's Session.resume): the user is the first subject, and their
    # working memory of the project and branch comes with the pack.
    user_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description=(
            "A (user, session) scope: the user is the tapestry's first subject, and their working memory "
            "comes with the pack."
        ),
    )
    project: Annotated[
        str,
        Field(
            description=(
                "With user_id: the project whose working memory to pack (at most 128 characters, '' for "
                "none)."
            )
        ),
    ] = BlockName
    branch: Annotated[
        str,
        Field(
            description=(
                "With user_id: the branch whose working memory to pack (at most 128 characters, '' for none)."
            )
        ),
    ] = BlockName
    max_tokens: int | None = Field(
        default=None,
        ge=50,
        le=8_000,
        description=(
            "The most tokens the tapestry may take (50-8,000; a token is ceil(characters / 4)); default "
            "LOOM_TAPESTRY_MAX_TOKENS (1,000). Only the call that weaves it (the session's first) counts."
        ),
    )


class PackAnswer(Answer):
    namespace: ActedIn
    session: SessionObject = Field(description="The agent's session (opened by this call if new).")
    tapestry: str | None = Field(
        description="The memory woven for the session, as text to put in the agent's context."
    )
    held: list[ThreadShape] = Field(
        description=(
            "The threads pinned in this session (memory.pin, memory.session_record's held), still live: "
            "what to put back after the conversation is summarised."
        )
    )
    gifts: list[ThreadShape] = Field(description="Threads another agent of the run gave, offered now (once).")
    proposals: list[ProposedThread] = Field(
        description=(
            "Facts extraction proposed (a loom in Suggest mode), offered now (once): weave the wanted ones "
            "with memory.set."
        )
    )
    # Annotated: a default here would be bound to the name ``working_memory`` the annotation reads.
    working_memory: Annotated[
        BlockAnswer | None,
        Field(
            description=(
                "The user's working memory of the project and branch; null when none (or no user_id)."
            )
        ),
    ]


def pack(caller: Caller, req: PackRequest) -> PackAnswer:
    """Get the memory to put in an agent's context for this conversation.

    Call it at the start of an agent's turn: it opens the agent's session (by thread, run and agent),
    weaves its tapestry from the loom's threads on the first call (within `max_tokens`; each line names
    its thread's id) and answers the same tapestry after, answers the threads pinned in the session
    (`held`), and offers once what waits for it (gifts from other agents, proposals from extraction).
    With a `user_id` (and `project`, `branch`) it brings that user's working memory too.

    Errors: 404 for a loom not in this namespace; 422 for a subject over 200 characters."""
    if any(not 1 <= len(subject) <= 200 for subject in req.subjects):
        raise invalid("each subject is 1 to 200 characters", "subjects")
    now = utcnow()
    with db.session() as s:
        loom = the_loom(s, caller, req)
        session = sessions.open_session(s, loom, sessions.Where(req.thread_id, req.run_id, req.agent), now)
        about = tapestry.Subjects(req.thread_id, req.user_id, req.subjects)
        tapestry.weave(s, loom, session, about, req.max_tokens or get_settings().tapestry_max_tokens, now)
        held = memory.still_live(s, session.held_thread_ids, now)
        gifts, proposals = sessions.offer(s, session, now)
        name = working_memory.Name(loom.namespace, req.user_id or "", req.project, req.branch)
        block = working_memory.written(s, name)
        return PackAnswer(
            namespace=loom.namespace,
            session=session_object(session),
            tapestry=session.tapestry,
            held=[shown(thread) for thread in held],
            gifts=[shown(thread) for thread in gifts],
            proposals=[proposed(proposal) for proposal in proposals],
            working_memory=None if block is None else block_answer(block, block),
        )
