"""working_memory.get, working_memory.set and working_memory.list: the "where was I" block of a line
of work (``models.working_memory``), by namespace, user, project and branch.

A block is written whole; a set that repeats the block's content writes nothing (a hook run twice
adds no revision), and ``if_revision`` makes it compare-and-set. The content is screened as it is
stored: a block that reads as high is kept, and read back blank with ``withheld: true``, so no
secret goes to the model that reads the block. Nothing here is embedded or searched.

The user: a token bounded to one user (or to a session of one) reads and writes that user's blocks
only; a namespace-wide token names ``user_id``, or none for the block of no one user."""

from pydantic import Field
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import Session, col, select

from models import db
from models.base import utcnow
from models.working_memory import CONTENT_MAX, WorkingMemory, WorkingMemoryRevision
from ops.caller import NAMESPACE_WIDE, Caller
from ops.errors import OpError, forbidden, not_found
from ops.schemas import Answer, Moment, OpRequest
from pipelines import screening

Name = Field(default="", max_length=128, pattern=r"^[^\x00-\x1f\x7f]*$")


class BlockOp(OpRequest):
    user_id: str | None = Field(default=None, min_length=1, max_length=256)
    project: str = Name
    branch: str = Name


class GetRequest(BlockOp):
    revision: int | None = Field(default=None, ge=1, le=2**31 - 1)


class SetRequest(BlockOp):
    content: str = Field(max_length=CONTENT_MAX)
    session_id: str | None = Field(default=None, min_length=1, max_length=256)
    if_revision: int | None = Field(default=None, ge=0, le=2**31 - 1)  # 0: only if there is none yet


class ListRequest(OpRequest):
    user_id: str | None = Field(default=None, min_length=1, max_length=256)
    project: str | None = Field(default=None, max_length=128)
    limit: int = Field(default=20, ge=1, le=200)


class BlockAnswer(Answer):
    namespace: str
    user_id: str
    project: str
    branch: str
    revision: int
    content: str  # blank when withheld
    withheld: bool  # the content reads as high (a secret or a personal number)
    session_id: str | None
    updated_at: Moment


class SetAnswer(BlockAnswer):
    changed: bool  # false: the block already held this content


class BlockLine(Answer):
    """A block named, never its content (the session-start primer lists these)."""

    user_id: str
    project: str
    branch: str
    revision: int
    chars: int
    updated_at: Moment


class ListAnswer(Answer):
    namespace: str
    blocks: list[BlockLine]


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
        WorkingMemory.namespace == namespace,
        WorkingMemory.user_id == user,
        WorkingMemory.project == project,
        WorkingMemory.branch == branch,
    ]


def get(caller: Caller, req: GetRequest) -> BlockAnswer:
    namespace, user = caller.namespace(req.namespace), user_of(caller, req.user_id)
    with db.session() as s:
        block = s.exec(select(WorkingMemory).where(*_where(namespace, user, req.project, req.branch))).first()
        if block is None:
            raise not_found("no working memory for this user, project and branch")
        revision: WorkingMemory | WorkingMemoryRevision = block
        if req.revision is not None:
            kept = s.exec(
                select(WorkingMemoryRevision).where(
                    WorkingMemoryRevision.block_id == block.id, WorkingMemoryRevision.revision == req.revision
                )
            ).first()
            if kept is None:
                raise not_found(f"the block has no revision {req.revision}", "revision")
            revision = kept
        return BlockAnswer(**_answer(block, revision))


def block_of(s: Session, namespace: str, user: str, project: str, branch: str) -> BlockAnswer | None:
    """The block of a user, project and branch as it reads now (context.pack's), if there is one."""
    block = s.exec(
        select(WorkingMemory).where(*_where(namespace, user, project, branch), WorkingMemory.revision > 0)
    ).first()
    return None if block is None else BlockAnswer(**_answer(block, block))


def set_block(caller: Caller, req: SetRequest) -> SetAnswer:
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
    namespace = caller.namespace(req.namespace)
    query = select(WorkingMemory).where(WorkingMemory.namespace == namespace, WorkingMemory.revision > 0)
    if caller.read_scope != NAMESPACE_WIDE or req.user_id is not None:
        query = query.where(WorkingMemory.user_id == user_of(caller, req.user_id))
    if req.project is not None:
        query = query.where(WorkingMemory.project == req.project)
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
