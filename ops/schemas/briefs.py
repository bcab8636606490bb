"""How a session brief is addressed, shared by session.brief_save (``ops.brief_save``) and the
brief reads (``ops.briefs``), beside every op's shared fields (``ops.schemas``).

An empty ``brief_key`` is ``auto/<project>/<branch>``, else ``session/<session_id>``. A token
bounded to one user (or session) stores its briefs under its bounds' prefix
(``pipelines.briefs.bounds_prefix``) and sees them without it; a namespace-wide token sees the
stored form."""

from typing import Annotated, Literal

from pydantic import Field

from ops.caller import NAMESPACE_WIDE, OWN_SESSION, Caller
from ops.errors import invalid
from ops.schemas import OpRequest
from pipelines import briefs

# Who wrote a revision, as every brief answer says it.
Author = Annotated[
    Literal["llm", "deterministic", "model"] | None,
    Field(
        description=(
            "Who wrote the revision: llm (the model, from events), deterministic (the builder, from events) "
            "or model (the calling agent's own sections)."
        )
    ),
]


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
