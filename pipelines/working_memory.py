"""Working memory: the "where was I" block of a line of work (``models.working_memory``), by
namespace, user, project and branch. Plain functions in the caller's transaction.

A block is written whole, every revision kept; a write that repeats the block's content writes
nothing (a hook run twice adds no revision). Its content is screened as it is stored: a block that
reads as high is kept, and read back blank (``withheld``), so no secret goes to the model that
reads the block. Nothing here is embedded or searched."""

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.dialects.postgresql import insert
from sqlmodel import Session, col, select

from models.base import stored
from models.working_memory import WorkingMemory, WorkingMemoryRevision
from pipelines import screening


@dataclass(frozen=True)
class Name:
    """What names a block."""

    namespace: str
    user_id: str  # '' for the block of no one user
    project: str
    branch: str

    def where(self) -> tuple:
        return (
            col(WorkingMemory.namespace) == self.namespace,
            col(WorkingMemory.user_id) == self.user_id,
            col(WorkingMemory.project) == self.project,
            col(WorkingMemory.branch) == self.branch,
        )


def withheld(revision: WorkingMemory | WorkingMemoryRevision) -> bool:
    """A revision that reads as high is read back blank."""
    return revision.sensitivity == screening.HIGH


def block(s: Session, name: Name) -> WorkingMemory | None:
    """The block of that name, whether or not a revision has written it."""
    return s.exec(select(WorkingMemory).where(*name.where())).first()


def written(s: Session, name: Name) -> WorkingMemory | None:
    """The block of that name as it reads now, if a revision has written it (context.pack's)."""
    return s.exec(select(WorkingMemory).where(*name.where(), col(WorkingMemory.revision) > 0)).first()


def revision_of(s: Session, block_id: int, revision: int) -> WorkingMemoryRevision | None:
    query = select(WorkingMemoryRevision).where(
        col(WorkingMemoryRevision.block_id) == block_id, col(WorkingMemoryRevision.revision) == revision
    )
    return s.exec(query).first()


def locked(s: Session, name: Name, who: str, now: datetime) -> WorkingMemory:
    """The block's row, made (empty, revision 0) or found, then locked: concurrent writes of one
    block take turns, and each compares with what the last one wrote."""
    s.exec(
        insert(WorkingMemory)
        .values(
            namespace=name.namespace,
            user_id=name.user_id,
            project=name.project,
            branch=name.branch,
            content="",
            sensitivity=screening.NONE,
            revision=0,
            written_by=who,
            created_at=now,
            updated_at=now,
        )
        .on_conflict_do_nothing()
    )
    return s.exec(select(WorkingMemory).where(*name.where()).with_for_update()).one()


def write(
    s: Session, block: WorkingMemory, content: str, session_id: str | None, who: str, now: datetime
) -> bool:
    """Write ``content`` as the locked block's next revision, screened; False, writing nothing,
    when it repeats the block's content."""
    if block.revision > 0 and block.content == content:
        return False
    sensitivity = screening.screen(content).level
    block.revision += 1
    block.content, block.sensitivity = content, sensitivity
    block.session_id, block.written_by, block.updated_at = session_id, who, now
    s.add(block)
    s.add(
        WorkingMemoryRevision(
            block_id=stored(block.id),
            revision=block.revision,
            content=content,
            sensitivity=sensitivity,
            session_id=session_id,
            written_by=who,
            created_at=now,
        )
    )
    s.flush()
    return True


def listed(
    s: Session, namespace: str, user_id: str | None, project: str | None, limit: int
) -> list[WorkingMemory]:
    """The namespace's written blocks, newest first: of ``user_id`` and ``project``, those given."""
    query = select(WorkingMemory).where(
        col(WorkingMemory.namespace) == namespace, col(WorkingMemory.revision) > 0
    )
    if user_id is not None:
        query = query.where(col(WorkingMemory.user_id) == user_id)
    if project is not None:
        query = query.where(col(WorkingMemory.project) == project)
    return list(s.exec(query.order_by(col(WorkingMemory.updated_at).desc()).limit(limit)))
