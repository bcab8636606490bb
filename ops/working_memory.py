"""working_memory.get, working_memory.set and working_memory.list: the "where was I" block of a line
of work (``models.working_memory``), by namespace, user, project and branch.

A block is written whole; a set that repeats the block's content writes nothing (a hook run twice
adds no revision), and ``if_revision`` makes it compare-and-set. The content is screened as it is
stored: a block that reads as high is kept, and read back blank with ``withheld: true``, so no
secret goes to the model that reads the block. Nothing here is embedded or searched.

The user: a token bounded to one user (or to a session of one) reads and writes that user's blocks
only; a namespace-wide token names ``user_id``, or none for the block of no one user."""

from typing import Annotated

from pydantic import Field
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import Session, col, select

from models import db
from models.base import utcnow
from models.working_memory import CONTENT_MAX, WorkingMemory, WorkingMemoryRevision
from ops.caller import NAMESPACE_WIDE, Caller
from ops.errors import OpError, forbidden, not_found
from ops.schemas import ActedIn, Answer, Moment, OpRequest
from pipelines import screening

Name = Field(default="", max_length=128, pattern=r"^[^\x00-\x1f\x7f]*$")


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
    ] = Name
    branch: Annotated[
        str,
        Field(
            description=(
                "The branch the block is for (at most 128 characters, no control characters; '' for none)."
            )
        ),
    ] = Name


class GetRequest(BlockOp):
    revision: int | None = Field(
        default=None,
        ge=1,
        le=2**31 - 1,
        description="Read this revision of the block (1 or more); the latest when omitted.",
    )


class SetRequest(BlockOp):
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


class ListRequest(OpRequest):
    user_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=256,
        description="Only this user's blocks (a token bounded to one user lists its own).",
    )
    project: str | None = Field(default=None, max_length=128, description="Only blocks of this project.")
    limit: int = Field(default=20, ge=1, le=200, description="How many blocks to answer (1-200, default 20).")


class BlockAnswer(Answer):
    namespace: ActedIn
    user_id: str = Field(description="The user the block belongs to.")
    project: str = Field(description="The block's project ('' for none).")
    branch: str = Field(description="The block's branch ('' for none).")
    revision: int = Field(description="The block's revision number (1 for the first write).")
    content: str = Field(description="The block's text; blank when withheld.")
    withheld: bool = Field(
        description=(
            "Whether the content reads as high (a secret or a personal number): kept, but read back blank."
        )
    )
    session_id: str | None = Field(description="The session that wrote this revision.")
    updated_at: Moment = Field(description="When this revision was written.")


class SetAnswer(BlockAnswer):
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


class ListAnswer(Answer):
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


def _answer(block: WorkingMemory, revision: WorkingMemory | WorkingMemoryRevision, **more) -> dict:
    withheld = revision.sensitivity == screening.HIGH
    return {
        "namespace": block.namespace,
        "user_id": block.user_id,
        "project": block.project,
        "branch": block.branch,
        "revision": revision.revision,
        "content": "" if withheld else revision.content,
        "withheld": withheld,
        "session_id": revision.session_id,
        "updated_at": revision.created_at
        if isinstance(revision, WorkingMemoryRevision)
        else block.updated_at,
        **more,
    }


def _where(namespace: str, user: str, project: str, branch: str) -> list:
    return [
        col(WorkingMemory.namespace) == namespace,
        col(WorkingMemory.user_id) == user,
        col(WorkingMemory.project) == project,
        col(WorkingMemory.branch) == branch,
    ]


def get(caller: Caller, req: GetRequest) -> BlockAnswer:
    """Read the working memory ("where was I" note) of a user, project and branch.

    The latest revision, or `revision`. A block that reads as high is read back blank,
    `withheld: true`.

    Errors: 404 when there is no block (or no such revision)."""
    namespace, user = caller.namespace(req.namespace), user_of(caller, req.user_id)
    with db.session() as s:
        block = s.exec(select(WorkingMemory).where(*_where(namespace, user, req.project, req.branch))).first()
        if block is None:
            raise not_found("no working memory for this user, project and branch")
        revision: WorkingMemory | WorkingMemoryRevision = block
        if req.revision is not None:
            kept = s.exec(
                select(WorkingMemoryRevision).where(
                    col(WorkingMemoryRevision.block_id) == block.id,
                    col(WorkingMemoryRevision.revision) == req.revision,
                )
            ).first()
            if kept is None:
                raise not_found(f"the block has no revision {req.revision}", "revision")
            revision = kept
        return BlockAnswer(**_answer(block, revision))


def block_of(s: Session, namespace: str, user: str, project: str, branch: str) -> BlockAnswer | None:
    """The block of a user, project and branch as it reads now (context.pack's), if there is one."""
    block = s.exec(
        select(WorkingMemory).where(
            *_where(namespace, user, project, branch), col(WorkingMemory.revision) > 0
        )
    ).first()
    return None if block is None else BlockAnswer(**_answer(block, block))


def set_block(caller: Caller, req: SetRequest) -> SetAnswer:
    """Write the working memory ("where was I" note) of a user, project and branch.

    The block is written whole (at most 4,000 characters) and every revision is kept; a set that
    repeats the content writes nothing (`changed: false`). `if_revision` makes it compare-and-set.

    Errors: 409 when `if_revision` does not match; 403 for a token bounded to a session of no user."""
    namespace, user = caller.namespace(req.namespace), user_of(caller, req.user_id)
    now = utcnow()
    sensitivity = screening.screen(req.content).level
    with db.session() as s:
        # The block's row is made (empty, revision 0) or found, then locked: concurrent sets of one
        # block take turns, and each compares with what the last one wrote.
        s.exec(
            insert(WorkingMemory)
            .values(
                namespace=namespace,
                user_id=user,
                project=req.project,
                branch=req.branch,
                content="",
                sensitivity=screening.NONE,
                revision=0,
                written_by=caller.who[:64],
                created_at=now,
                updated_at=now,
            )
            .on_conflict_do_nothing()
        )
        block = s.exec(
            select(WorkingMemory).where(*_where(namespace, user, req.project, req.branch)).with_for_update()
        ).one()
        if req.if_revision is not None and block.revision != req.if_revision:
            raise OpError(409, f"the block is at revision {block.revision}, not {req.if_revision}")
        if block.revision > 0 and block.content == req.content:
            return SetAnswer(**_answer(block, block, changed=False))
        block.revision += 1
        block.content, block.sensitivity = req.content, sensitivity
        block.session_id, block.written_by, block.updated_at = req.session_id, caller.who[:64], now
        s.add(block)
        s.add(
            WorkingMemoryRevision(
                block_id=block.id,
                revision=block.revision,
                content=req.content,
                sensitivity=sensitivity,
                session_id=req.session_id,
                written_by=caller.who[:64],
                created_at=now,
            )
        )
        s.flush()
        return SetAnswer(**_answer(block, block, changed=True))


def list_blocks(caller: Caller, req: ListRequest) -> ListAnswer:
    """List the working memory blocks by name and date, newest first.

    Never their content: each block's user, project, branch, revision and length."""
    namespace = caller.namespace(req.namespace)
    query = select(WorkingMemory).where(
        col(WorkingMemory.namespace) == namespace, col(WorkingMemory.revision) > 0
    )
    if caller.read_scope != NAMESPACE_WIDE or req.user_id is not None:
        query = query.where(col(WorkingMemory.user_id) == user_of(caller, req.user_id))
    if req.project is not None:
        query = query.where(col(WorkingMemory.project) == req.project)
    with db.session() as s:
        blocks = s.exec(query.order_by(col(WorkingMemory.updated_at).desc()).limit(req.limit)).all()
        return ListAnswer(
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
