"""session.brief_get / brief_list / brief_delete (the save is ``ops.brief_save``): the resumable
state of one line of work, and how a brief is addressed.

Addressing: an empty ``brief_key`` is ``auto/<project>/<branch>``, else ``session/<session_id>``.
A token bounded to one user (or session) stores its briefs under its bounds' prefix
(``pipelines.briefs.bounds_prefix``) and sees them without it; a namespace-wide token sees the
stored form."""

from typing import Literal

from pydantic import Field
from sqlmodel import col, delete, func, select

from models import db
from models.brief import (
    BriefRevision,
    SessionBrief,
)
from ops.caller import NAMESPACE_WIDE, OWN_SESSION, Caller
from ops.errors import invalid, not_found
from ops.schemas import ActedIn, Answer, Moment, OpRequest
from pipelines import briefs


class BriefOp(OpRequest):
    # The user an own_user token that serves many users through one credential acts for.
    user_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=256,
        description=(
            "For a token bounded to users that serves many users through one credential: the user it acts "
            "for."
        ),
    )


class GetRequest(BriefOp):
    brief_key: str | None = Field(
        default=None,
        min_length=1,
        max_length=600,
        description="The brief to read; else from_session, else project.",
    )
    from_session: str | None = Field(
        default=None, min_length=1, max_length=256, description="Read the newest brief this session wrote."
    )
    project: str | None = Field(
        default=None, min_length=1, max_length=128, description="Read this project's newest brief."
    )
    revision: int | None = Field(
        default=None,
        ge=1,
        le=2**31 - 1,
        description="Read this revision (1 or more); the latest when omitted.",
    )
    full: bool = Field(
        default=False,
        description=(
            "true: append the client's last compaction summary (its newest summary event) verbatim to the "
            "markdown."
        ),
    )


class BriefAnswer(Answer):
    namespace: ActedIn
    brief_key: str = Field(description="The brief's key (^[A-Za-z0-9][A-Za-z0-9_.:/@+-]{0,159}$).")
    project: str | None = Field(description="The project the brief is of, if known.")
    branch: str | None = Field(description="The branch the brief is of, if known.")
    revision: int = Field(description="The revision read.")
    author: Literal["llm", "deterministic", "model"] | None = Field(
        description=(
            "Who wrote the revision: llm (the model, from events), deterministic (the builder, from events) "
            "or model (the calling agent's own sections)."
        )
    )
    session_id: str | None = Field(description="The session that wrote the revision.")
    updated_at: Moment = Field(description="When the revision was written.")
    sections: dict[str, str | list[str]] = Field(
        description=(
            "The brief's sections by name (goal, status, decisions, dead_ends, done, open_questions, "
            "next_steps, key_files, errors, constraints, pointers): a text or a list of items."
        )
    )
    markdown: str = Field(description="The brief rendered as markdown, ready to put in an agent's context.")
    client_summary: str | None = Field(
        description="With full: the client's last compaction summary, verbatim."
    )


class ListRequest(BriefOp):
    mine_only: bool = Field(default=False, description="Only the briefs the caller's token wrote.")
    project: str | None = Field(
        default=None, min_length=1, max_length=128, description="Only briefs of this project."
    )
    limit: int = Field(default=50, ge=1, le=200, description="How many briefs to answer (1-200, default 50).")


class BriefLine(Answer):
    brief_key: str = Field(description="The brief's key (^[A-Za-z0-9][A-Za-z0-9_.:/@+-]{0,159}$).")
    project: str | None = Field(description="The project the brief is of.")
    branch: str | None = Field(description="The branch the brief is of.")
    revision: int = Field(description="Its latest revision.")
    author: Literal["llm", "deterministic", "model"] | None = Field(
        description=(
            "Who wrote the revision: llm (the model, from events), deterministic (the builder, from events) "
            "or model (the calling agent's own sections)."
        )
    )
    updated_at: Moment = Field(description="When it was last revised.")
    line: str = Field(description="The brief in one line: its goal and status.")


class ListAnswer(Answer):
    namespace: ActedIn
    briefs: list[BriefLine] = Field(description="The briefs, newest first.")


class DeleteRequest(BriefOp):
    brief_key: str = Field(
        min_length=1, max_length=600, description="The brief to forget, with every revision."
    )


class DeleteAnswer(Answer):
    namespace: ActedIn
    brief_key: str = Field(description="The brief asked about.")
    deleted: bool = Field(description="Whether there was such a brief to delete.")


# --- addressing ----------------------------------------------------------------------------------


def prefix_of(caller: Caller, req: BriefOp) -> str:
    if caller.read_scope == NAMESPACE_WIDE:
        return ""
    if caller.read_scope == OWN_SESSION:
        return briefs.bounds_prefix(caller.user_id, caller.session_id)
    return briefs.bounds_prefix(caller.acting_user(req.user_id))


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
    query = select(SessionBrief).where(
        col(SessionBrief.namespace) == namespace, col(SessionBrief.revision) > 0
    )
    if prefix := prefix_of(caller, req):
        key = col(SessionBrief.brief_key)
        # Its own prefix, and no "~" after it: a longer prefix is another token's bounds.
        query = query.where(
            key.startswith(prefix, autoescape=True), func.strpos(func.substr(key, len(prefix) + 1), "~") == 0
        )
    return query


def get(caller: Caller, req: GetRequest) -> BriefAnswer:
    """Read a session brief: its sections and their markdown, to resume the work.

    By `brief_key`, else the newest brief of `from_session`, else the newest of `project`; any
    `revision`. With `full`, the client's last compaction summary is appended verbatim.

    Errors: 404 when there is no such brief or revision; 422 without any of brief_key, from_session
    and project."""
    namespace = caller.namespace(req.namespace)
    query = _visible(caller, req, namespace)
    with db.session() as s:
        if req.brief_key is not None:
            brief = s.exec(
                query.where(col(SessionBrief.brief_key) == stored_key(caller, req, req.brief_key))
            ).first()
        elif req.from_session is not None:
            wrote = select(col(BriefRevision.brief_id)).where(
                col(BriefRevision.session_id) == req.from_session
            )
            brief = s.exec(
                query.where(col(SessionBrief.id).in_(wrote)).order_by(col(SessionBrief.updated_at).desc())
            ).first()
        elif req.project is not None:
            brief = s.exec(
                query.where(col(SessionBrief.project) == req.project).order_by(
                    col(SessionBrief.updated_at).desc()
                )
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
                    col(BriefRevision.brief_id) == brief.id, col(BriefRevision.revision) == req.revision
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
    """List the session briefs, newest first, one line each (goal and status).

    Optionally only the caller's own (`mine_only`) or one project's."""
    namespace = caller.namespace(req.namespace)
    query = _visible(caller, req, namespace)
    if req.mine_only:
        query = query.where(col(SessionBrief.written_by) == caller.who[:64])
    if req.project is not None:
        query = query.where(col(SessionBrief.project) == req.project)
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
    """Forget a session brief and every revision of it.

    `deleted` says whether there was one."""
    namespace = caller.namespace(req.namespace)
    key = stored_key(caller, req, req.brief_key)
    with db.session() as s:
        gone = s.exec(
            delete(SessionBrief).where(
                col(SessionBrief.namespace) == namespace, col(SessionBrief.brief_key) == key
            )
        ).rowcount
    return DeleteAnswer(namespace=namespace, brief_key=req.brief_key, deleted=bool(gone))
