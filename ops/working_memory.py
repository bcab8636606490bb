"""working_memory.get, working_memory.set and working_memory.list: the "where was I" block of a line
of work (``models.working_memory``), by namespace, user, project and branch.

What a block is and how it is written is ``pipelines.working_memory``'s; ``if_revision`` makes a
set compare-and-set.

The user: a token bounded to one user (or to a session of one) reads and writes that user's blocks
only; a namespace-wide token names ``user_id``, or none for the block of no one user."""

from typing import Annotated

from pydantic import ConfigDict, Field

from models import db
from models.base import stored, utcnow
from models.working_memory import CONTENT_MAX, WorkingMemory, WorkingMemoryRevision
from ops.caller import NAMESPACE_WIDE, Caller
from ops.errors import OpError, forbidden, not_found
from ops.schemas import ActedIn, Answer, Moment, OpRequest
from ops.schemas.memory import BlockAnswer, BlockName, block_answer
from pipelines import working_memory


class BlockOp(OpRequest):
    user_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=256,
        description=(
            "The user whose block it is (1-256 characters); a token bounded to one user uses its own, a "
            "namespace-wide token names it."
        ),
    )
    project: Annotated[
        str,
        Field(
            description=(
                "The project the block is for (at most 128 characters, no control characters; '' for none)."
            )
        ),
    ] = BlockName
    branch: Annotated[
        str,
        Field(
            description=(
                "The branch the block is for (at most 128 characters, no control characters; '' for none)."
            )
        ),
    ] = BlockName


class WorkingMemoryGetRequest(BlockOp):
    model_config = ConfigDict(title="GetRequest")

    revision: int | None = Field(
        default=None,
        ge=1,
        le=2**31 - 1,
        description="Read this revision of the block (1 or more); the latest when omitted.",
    )


class WorkingMemorySetRequest(BlockOp):
    model_config = ConfigDict(title="SetRequest")

    content: str = Field(
        max_length=CONTENT_MAX,
        description="The block's whole new text (at most 4,000 characters): it replaces the old.",
    )
    session_id: str | None = Field(
        default=None, min_length=1, max_length=256, description="The coding session that writes it."
    )
    if_revision: int | None = Field(
        default=None,
        ge=0,
        le=2**31 - 1,
        description=(
            "Compare-and-set: write only when the block is at this revision (0: only when there is none "
            "yet); 409 otherwise."
        ),
    )


class WorkingMemoryListRequest(OpRequest):
    model_config = ConfigDict(title="ListRequest")

    user_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=256,
        description="Only this user's blocks (a token bounded to one user lists its own).",
    )
    project: str | None = Field(default=None, max_length=128, description="Only blocks of this project.")
    limit: int = Field(default=20, ge=1, le=200, description="How many blocks to answer (1-200, default 20).")


class WorkingMemorySetAnswer(BlockAnswer):
    model_config = ConfigDict(title="SetAnswer")

    changed: bool = Field(
        description="Whether a new revision was written (false: the content repeats the block's)."
    )


class BlockLine(Answer):
    """A block named, never its content (the session-start primer lists these)."""

    user_id: str = Field(description="The user the block belongs to.")
    project: str = Field(description="The block's project.")
    branch: str = Field(description="The block's branch.")
    revision: int = Field(description="Its latest revision number.")
    chars: int = Field(description="How many characters its content has (the content itself is not listed).")
    updated_at: Moment = Field(description="When it was last written.")


class WorkingMemoryListAnswer(Answer):
    model_config = ConfigDict(title="ListAnswer")

    namespace: ActedIn
    blocks: list[BlockLine] = Field(
        description="The blocks by name and date, newest first (never their content)."
    )


def user_of(caller: Caller, requested: str | None) -> str:
    """Whose block: a bounded token's own user, else the one named ('' for none)."""
    if caller.read_scope == NAMESPACE_WIDE:
        return requested or ""
    if caller.user_id is None:
        raise forbidden("working memory is per user, and this token is bounded to a session of no user")
    return caller.acting_user(requested)


def get(caller: Caller, req: WorkingMemoryGetRequest) -> BlockAnswer:
    """Read the working memory ("where was I" note) of a user, project and branch.

    The latest revision, or `revision`. A block that reads as high is read back blank,
    `withheld: true`.

    Errors: 404 when there is no block (or no such revision)."""
    name = working_memory.Name(
        caller.namespace(req.namespace), user_of(caller, req.user_id), req.project, req.branch
    )
    with db.session() as s:
        block = working_memory.block(s, name)
        if block is None:
            raise not_found("no working memory for this user, project and branch")
        revision: WorkingMemory | WorkingMemoryRevision = block
        if req.revision is not None:
            kept = working_memory.revision_of(s, stored(block.id), req.revision)
            if kept is None:
                raise not_found(f"the block has no revision {req.revision}", "revision")
            revision = kept
        return block_answer(block, revision)


def set_block(caller: Caller, req: WorkingMemorySetRequest) -> WorkingMemorySetAnswer:
    """Write the working memory ("where was I" note) of a user, project and branch.

    The block is written whole (at most 4,000 characters) and every revision is kept; a set that
    repeats the content writes nothing (`changed: false`). `if_revision` makes it compare-and-set.

    Errors: 409 when `if_revision` does not match; 403 for a token bounded to a session of no user."""
    name = working_memory.Name(
        caller.namespace(req.namespace), user_of(caller, req.user_id), req.project, req.branch
    )
    who, now = caller.who[:64], utcnow()
    with db.session() as s:
        block = working_memory.locked(s, name, who, now)
        if req.if_revision is not None and block.revision != req.if_revision:
            raise OpError(409, f"the block is at revision {block.revision}, not {req.if_revision}")
        changed = working_memory.write(s, block, req.content, req.session_id, who, now)
        return block_answer(block, block, WorkingMemorySetAnswer, changed=changed)


def list_blocks(caller: Caller, req: WorkingMemoryListRequest) -> WorkingMemoryListAnswer:
    """List the working memory blocks by name and date, newest first.

    Never their content: each block's user, project, branch, revision and length."""
    namespace = caller.namespace(req.namespace)
    user = None
    if caller.read_scope != NAMESPACE_WIDE or req.user_id is not None:
        user = user_of(caller, req.user_id)
    with db.session() as s:
        blocks = working_memory.listed(s, namespace, user, req.project, req.limit)
        return WorkingMemoryListAnswer(
            namespace=namespace,
            blocks=[
                BlockLine(
                    user_id=b.user_id,
                    project=b.project,
                    branch=b.branch,
                    revision=b.revision,
                    chars=len(b.content),
                    updated_at=b.updated_at,
                )
                for b in blocks
            ],
        )
