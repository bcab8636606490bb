"""session.brief_get / brief_list / brief_delete (the save is ``ops.brief_save``): the resumable
state of one line of work, and how a brief is addressed.

Addressing: an empty ``brief_key`` is ``auto/<project>/<branch>``, else ``session/<session_id>``.
A token bounded to one user (or session) stores its briefs under ``~<user>~`` (or
``~<user>~<session>~``) and sees them without it; a namespace-wide token sees the stored form."""

from typing import Literal

from pydantic import Field
from sqlmodel import col, delete, select

from models import db
from models.brief import (
    BriefRevision,
    SessionBrief,
)
from ops.caller import NAMESPACE_WIDE, OWN_SESSION, Caller
from ops.errors import invalid, not_found
from ops.schemas import Answer, Moment, OpRequest
from pipelines import briefs


class BriefOp(OpRequest):
    # The user an own_user token that serves many users through one credential acts for.
    user_id: str | None = Field(default=None, min_length=1, max_length=256)


class GetRequest(BriefOp):
    brief_key: str | None = Field(default=None, min_length=1, max_length=600)
    from_session: str | None = Field(default=None, min_length=1, max_length=256)
    project: str | None = Field(default=None, min_length=1, max_length=128)
    revision: int | None = Field(default=None, ge=1, le=2**31 - 1)
    full: bool = False  # append the client's last compaction summary verbatim


class BriefAnswer(Answer):
    namespace: str
    brief_key: str
    project: str | None
    branch: str | None
    revision: int
    author: Literal["llm", "deterministic", "model"] | None
    session_id: str | None
    updated_at: Moment
    sections: dict[str, str | list[str]]
    markdown: str
    client_summary: str | None  # with full=true


class ListRequest(BriefOp):
    mine_only: bool = False
    project: str | None = Field(default=None, min_length=1, max_length=128)
    limit: int = Field(default=50, ge=1, le=200)


class BriefLine(Answer):
    brief_key: str
    project: str | None
    branch: str | None
    revision: int
    author: Literal["llm", "deterministic", "model"] | None
    updated_at: Moment
    line: str


class ListAnswer(Answer):
    namespace: str
    briefs: list[BriefLine]


class DeleteRequest(BriefOp):
    brief_key: str = Field(min_length=1, max_length=600)


class DeleteAnswer(Answer):
    namespace: str
    brief_key: str
    deleted: bool


# --- addressing ----------------------------------------------------------------------------------


def prefix_of(caller: Caller, req: BriefOp) -> str:
    if caller.read_scope == NAMESPACE_WIDE:
        return ""
    if caller.read_scope == OWN_SESSION:
        return f"~{caller.user_id or '_'}~{caller.session_id}~"
    return f"~{caller.acting_user(req.user_id)}~"


def checked_key(key: str, field: str = "brief_key") -> str:
    if not briefs.KEY.match(key):
        raise invalid(f"{field} {key!r} must match {briefs.KEY.pattern}", field)
    return key


def stored_key(caller: Caller, req: BriefOp, key: str) -> str:
    """A key as the caller names it, as stored: under the bounds' prefix; a namespace-wide token
    may name a bounded token's brief by its stored form."""
    prefix = prefix_of(caller, req)
    if "~" in key and (prefix or not briefs.STORED_KEY.match(key)):
        raise invalid("a brief_key holds no '~' (a bounded token's prefix is added by Loom)", "brief_key")
    return key if key.startswith("~") else prefix + checked_key(key)


def seen_key(prefix: str, stored: str) -> str:
    return stored[len(prefix) :]


def _visible(caller: Caller, req: BriefOp, namespace: str):
    """The caller's briefs of the namespace that a revision has written."""
    query = select(SessionBrief).where(SessionBrief.namespace == namespace, SessionBrief.revision > 0)
    if prefix := prefix_of(caller, req):
        query = query.where(col(SessionBrief.brief_key).startswith(prefix, autoescape=True))
    return query


def get(caller: Caller, req: GetRequest) -> BriefAnswer:
    namespace = caller.namespace(req.namespace)
    query = _visible(caller, req, namespace)
    with db.session() as s:
        if req.brief_key is not None:
            brief = s.exec(
                query.where(SessionBrief.brief_key == stored_key(caller, req, req.brief_key))
            ).first()
        elif req.from_session is not None:
            wrote = select(BriefRevision.brief_id).where(BriefRevision.session_id == req.from_session)
            brief = s.exec(
                query.where(col(SessionBrief.id).in_(wrote)).order_by(col(SessionBrief.updated_at).desc())
            ).first()
        elif req.project is not None:
            brief = s.exec(
                query.where(SessionBrief.project == req.project).order_by(col(SessionBrief.updated_at).desc())
            ).first()
        else:
            raise invalid("brief_get needs brief_key, from_session or project", "brief_key")
        if brief is None:
            raise not_found("no such brief")
        sections, revision, author, session_id, at = (
            brief.sections,
            brief.revision,
            brief.author,
            brief.session_id,
            brief.updated_at,
        )
        if req.revision is not None:
            kept = s.exec(
                select(BriefRevision).where(
                    BriefRevision.brief_id == brief.id, BriefRevision.revision == req.revision
                )
            ).first()
            if kept is None:
                raise not_found(f"the brief has no revision {req.revision}", "revision")
            sections, revision, author, session_id, at = (
                kept.sections,
                kept.revision,
                kept.author,
                kept.session_id,
                kept.created_at,
            )
    seen = seen_key(prefix_of(caller, req), brief.brief_key)
    markdown = briefs.render(sections, seen)
    summary = brief.client_summary if req.full else None
    if summary:
        markdown += f"\n\n## The client's last compaction summary\n\n{summary}"
    return BriefAnswer(
        namespace=namespace,
        brief_key=seen,
        project=brief.project,
        branch=brief.branch,
        revision=revision,
        author=author,
        session_id=session_id,
        updated_at=at,
        sections=sections,
        markdown=markdown,
        client_summary=summary,
    )


def list_briefs(caller: Caller, req: ListRequest) -> ListAnswer:
    namespace = caller.namespace(req.namespace)
    query = _visible(caller, req, namespace)
    if req.mine_only:
        query = query.where(SessionBrief.written_by == caller.who[:64])
    if req.project is not None:
        query = query.where(SessionBrief.project == req.project)
    prefix = prefix_of(caller, req)
    with db.session() as s:
        rows = s.exec(
            query.order_by(col(SessionBrief.updated_at).desc(), col(SessionBrief.id).desc()).limit(req.limit)
        ).all()
    return ListAnswer(
        namespace=namespace,
        briefs=[
            BriefLine(
                brief_key=seen_key(prefix, brief.brief_key),
                project=brief.project,
                branch=brief.branch,
                revision=brief.revision,
                author=brief.author,
                updated_at=brief.updated_at,
                line=briefs.one_line(brief.sections),
            )
            for brief in rows
        ],
    )


def delete_brief(caller: Caller, req: DeleteRequest) -> DeleteAnswer:
    namespace = caller.namespace(req.namespace)
    key = stored_key(caller, req, req.brief_key)
    with db.session() as s:
        gone = s.exec(
            delete(SessionBrief).where(SessionBrief.namespace == namespace, SessionBrief.brief_key == key)
        ).rowcount
    return DeleteAnswer(namespace=namespace, brief_key=req.brief_key, deleted=bool(gone))
