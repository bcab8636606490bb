"""session.brief_get / brief_list / brief_delete (the save is ``ops.brief_save``): the resumable
state of one line of work. A brief is addressed as ``ops.schemas.briefs`` says; it is read and
deleted by ``pipelines.brief_store``."""

from pydantic import ConfigDict, Field

from models import db
from models.base import stored
from ops.caller import Caller
from ops.errors import invalid, not_found
from ops.schemas import ActedIn, Answer, Moment
from ops.schemas.briefs import Author, BriefOp, prefix_of, seen_key, stored_key
from pipelines import brief_store, briefs


class BriefGetRequest(BriefOp):
    model_config = ConfigDict(title="GetRequest")

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
    author: Author
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


class BriefListRequest(BriefOp):
    model_config = ConfigDict(title="ListRequest")

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
    author: Author
    updated_at: Moment = Field(description="When it was last revised.")
    line: str = Field(description="The brief in one line: its goal and status.")


class BriefListAnswer(Answer):
    model_config = ConfigDict(title="ListAnswer")

    namespace: ActedIn
    briefs: list[BriefLine] = Field(description="The briefs, newest first.")


class BriefDeleteRequest(BriefOp):
    model_config = ConfigDict(title="DeleteRequest")

    brief_key: str = Field(
        min_length=1, max_length=600, description="The brief to forget, with every revision."
    )


class BriefDeleteAnswer(Answer):
    model_config = ConfigDict(title="DeleteAnswer")

    namespace: ActedIn
    brief_key: str = Field(description="The brief asked about.")
    deleted: bool = Field(description="Whether there was such a brief to delete.")


def get(caller: Caller, req: BriefGetRequest) -> BriefAnswer:
    """Read a session brief: its sections and their markdown, to resume the work.

    By `brief_key`, else the newest brief of `from_session`, else the newest of `project`; any
    `revision`. With `full`, the client's last compaction summary is appended verbatim.

    Errors: 404 when there is no such brief or revision; 422 without any of brief_key, from_session
    and project."""
    namespace, prefix = caller.namespace(req.namespace), prefix_of(caller, req)
    with db.session() as s:
        if req.brief_key is not None:
            brief = brief_store.named(s, namespace, prefix, stored_key(caller, req, req.brief_key))
        elif req.from_session is not None:
            brief = brief_store.newest_of_session(s, namespace, prefix, req.from_session)
        elif req.project is not None:
            brief = brief_store.newest_of_project(s, namespace, prefix, req.project)
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
            kept = brief_store.revision_of(s, stored(brief.id), req.revision)
            if kept is None:
                raise not_found(f"the brief has no revision {req.revision}", "revision")
            sections, revision, author, session_id, at = (
                kept.sections,
                kept.revision,
                kept.author,
                kept.session_id,
                kept.created_at,
            )
    seen = seen_key(prefix, brief.brief_key)
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


def list_briefs(caller: Caller, req: BriefListRequest) -> BriefListAnswer:
    """List the session briefs, newest first, one line each (goal and status).

    Optionally only the caller's own (`mine_only`) or one project's."""
    namespace, prefix = caller.namespace(req.namespace), prefix_of(caller, req)
    written_by = caller.who[:64] if req.mine_only else None
    with db.session() as s:
        rows = brief_store.listed(s, namespace, prefix, written_by, req.project, req.limit)
    return BriefListAnswer(
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


def delete_brief(caller: Caller, req: BriefDeleteRequest) -> BriefDeleteAnswer:
    """Forget a session brief and every revision of it.

    `deleted` says whether there was one."""
    namespace = caller.namespace(req.namespace)
    key = stored_key(caller, req, req.brief_key)
    with db.session() as s:
        deleted = brief_store.forget(s, namespace, key)
    return BriefDeleteAnswer(namespace=namespace, brief_key=req.brief_key, deleted=deleted)
