"""Who is calling: a token's role and namespaces, or the local operator (the CLI)."""

import hashlib
import hmac
import logging
import secrets
import threading
import time
from dataclasses import dataclass
from functools import lru_cache

from cachetools import LRUCache

from models.namespace import ROLES, ApiToken, name_problem, role_rank
from models.settings import get_settings
from ops.errors import forbidden, invalid, unauthorized
from pipelines import tokens
from services import keys

log = logging.getLogger(__name__)

TOKEN_PREFIX = "loom_"


NAMESPACE_WIDE, OWN_USER, OWN_SESSION = "namespace", "own_user", "own_session"
READ_SCOPES = (NAMESPACE_WIDE, OWN_USER, OWN_SESSION)
ME = "@me"  # the namespace of a token minted for one end user
# The ops a token bounded to one user may call: a saved message has its owner; a thread mixes
# users and has no user axis to bound, so every other conversation op is refused to it.
USER_BOUNDED_OPS = frozenset(
    {
        "conversation.save_message",
        "conversation.unsave_message",
        "conversation.search_saved_messages",
        "conversation.list_saved_messages",
        "conversation.saved_status",
    }
)


# Session briefs and working memory are the planes a token bounded to a user or a session may use
# in full: each of its briefs is stored under its bounds' prefix (``ops.briefs``), and its working
# memory is its user's (``ops.working_memory``).
BOUNDED_PLANE_OPS = frozenset(
    {
        "session.brief_save",
        "session.brief_get",
        "session.brief_list",
        "session.brief_delete",
        "working_memory.get",
        "working_memory.set",
        "working_memory.list",
    }
)


@dataclass(frozen=True)
class Caller:
    role: str
    namespaces: tuple[str, ...] | None  # None: every namespace (the CLI, or an --all-namespaces token)
    who: str = "operator"  # for the erasure log: "operator", or "token <id>"
    read_scope: str = NAMESPACE_WIDE
    user_id: str | None = None  # the one user an own_user (or own_session) token is pinned to, if any
    session_id: str | None = None  # the one session an own_session token is pinned to
    # Whom the token speaks for (its user id, else the user it is pinned to): the owner of the
    # coding-session threads it writes. Bounds nothing; None: it speaks for its namespace.
    speaks_for: str | None = None

    def may_call(self, op: str) -> None:
        if op in BOUNDED_PLANE_OPS:
            return
        if self.read_scope == OWN_SESSION:
            raise forbidden(
                "an own_session token is refused by the conversation ops (they have no session axis)"
            )
        if self.read_scope == OWN_USER and op not in USER_BOUNDED_OPS:
            raise forbidden(f"an own_user token may call only the saved-message ops, not {op}")

    def acting_user(self, requested: str | None) -> str:
        """The user a saved-message op acts as: the one a token is pinned to, else the one named
        (an own_user token that serves many users through one credential names each)."""
        if self.user_id is not None:
            if requested is not None and requested != self.user_id:
                raise forbidden("the token acts for one user only; user_id names another")
            return self.user_id
        if requested is None:
            raise invalid("user_id is required", "user_id")
        return requested

    def require_all_namespaces(self) -> None:
        """The operator ops read and act across namespaces (the ledger, the passes, the nights)."""
        if self.namespaces is not None:
            raise forbidden("this op needs a token for every namespace (loom tokens create --all-namespaces)")

    def require(self, role: str) -> None:
        if role_rank(self.role) < role_rank(role):
            raise forbidden(f"this op needs the {role} role; the token is {self.role}")

    def namespace(self, requested: str | None) -> str:
        """The namespace an op acts in: the one asked for, if covered, else the token's only one
        (which ``@me`` names too)."""
        if requested is None or requested == ME:
            if self.namespaces is not None and len(self.namespaces) == 1:
                # A token minted before the namespace rule existed may name one the rule refuses.
                if problem := name_problem(self.namespaces[0]):
                    raise invalid(f"the token's namespace {problem}", "namespace")
                return self.namespaces[0]
            raise invalid("namespace is required (the token covers more than one)", "namespace")
        if self.namespaces is not None and requested not in self.namespaces:
            raise forbidden(f"the token does not cover namespace {requested!r}")
        return requested

    def scope(self, requested: str | None) -> list[str]:
        """For fan-out reads: the named namespace, or every namespace of the caller."""
        if requested is not None or self.namespaces is None:
            return [self.namespace(requested)]
        return list(self.namespaces)


OPERATOR = Caller(role="admin", namespaces=None)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_token(
    namespaces: list[str],
    role: str,
    read_scope: str = NAMESPACE_WIDE,
    read_user_id: str | None = None,
    read_session_id: str | None = None,
    user_id: str | None = None,
    all_namespaces: bool = False,
) -> str:
    """Mint a token; only its hash is stored, so this is the one time it can be shown. One for
    ``all_namespaces`` (and no namespace named) is the operator's: every namespace, and the
    operator ops (``ops.runs``, ``ops.passes``, ``ops.namespaces``, ``ops.health``)."""
    if role not in ROLES:
        raise invalid(f"role must be one of {', '.join(ROLES)}", "role")
    if all_namespaces:
        if namespaces:
            raise invalid("--all-namespaces names no --namespace", "namespace")
        if read_scope != NAMESPACE_WIDE:
            raise invalid("an --all-namespaces token has the namespace read scope", "read_scope")
    elif not namespaces:
        raise invalid("at least one namespace is required (or --all-namespaces)", "namespace")
    for name in namespaces:
        if problem := name_problem(name):
            raise invalid(f"namespace {name!r} {problem}", "namespace")
    if read_scope not in READ_SCOPES:
        raise invalid(f"read scope must be one of {', '.join(READ_SCOPES)}", "read_scope")
    if read_scope != NAMESPACE_WIDE and len(set(namespaces)) != 1:
        raise invalid(f"an {read_scope} token covers exactly one namespace (its @me)", "namespace")
    if read_user_id is not None and read_scope == NAMESPACE_WIDE:
        raise invalid("--read-user-id goes with --read-scope own_user or own_session", "read_user_id")
    if read_session_id is not None and read_scope != OWN_SESSION:
        raise invalid("--read-session-id goes with --read-scope own_session", "read_session_id")
    for value, field in (
        (read_user_id, "read_user_id"),
        (read_session_id, "read_session_id"),
        (user_id, "user_id"),
    ):
        if value is not None and not 1 <= len(value) <= 256:
            raise invalid(f"{field} must be 1 to 256 characters", field)
    if user_id is not None and read_user_id is not None and user_id != read_user_id:
        raise invalid("--user-id must be the user --read-user-id pins the token to", "user_id")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    tokens.add(
        ApiToken(
            token_hash=token_hash(token),
            role=role,
            namespaces=sorted(set(namespaces)),
            all_namespaces=all_namespaces,
            read_scope=read_scope,
            read_user_id=read_user_id,
            read_session_id=read_session_id,
            user_id=user_id,
        )
    )
    return token


def list_tokens() -> list[ApiToken]:
    return tokens.listed()


def revoke_token(token_id: int) -> bool:
    """Revoke a token (answered 401 once the grant cache forgets it: TOKEN_CACHE_SECONDS); False
    when there is no such live token."""
    return tokens.revoke(token_id)


def authenticate(authorization: str | None) -> Caller:
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise unauthorized()
    return by_token_hash(token_hash(token.strip()))


def by_token_hash(hashed: str) -> Caller:
    """The caller a token (by its hash: the dashboard's sessions keep only that) stands for; 401
    when it is unknown or revoked. The operator key of this data directory is the operator."""
    operator = operator_key_hash()
    if operator is not None and hmac.compare_digest(hashed, operator):
        return OPERATOR
    bucket = int(time.monotonic() // TOKEN_CACHE_SECONDS)
    if _refused.get((hashed, bucket)):
        raise unauthorized()
    try:
        return _granted(hashed, bucket)
    except _UnknownToken:
        _refused.add((hashed, bucket))
        raise unauthorized() from None


@lru_cache(maxsize=1)
def operator_key_hash() -> str | None:
    """The hash of ``<home>/operator.key`` (generated on first use): the key the CLI of this host
    sends for the operator. Read once a process: a new key needs the API restarted. None where the
    data directory cannot hold it (an API host with a read-only home): no operator key there."""
    path = get_settings().operator_key_file
    try:
        return token_hash(keys.kept(path))
    except OSError as exc:
        log.warning("no operator key (loom search on this host runs in process): %s: %s", path, exc)
        return None


# A capture hook appends turn after turn with one token: remember what a token grants for a few
# seconds (the second argument is the time bucket) instead of a query per request. Unknown tokens
# are remembered apart, so a spray of bad tokens neither evicts nor clears the good ones.
TOKEN_CACHE_SECONDS = 10


class _UnknownToken(Exception):
    """Raised, not returned, so that lru_cache never keeps a miss among the grants."""


@lru_cache(maxsize=1024)
def _granted(hashed: str, _bucket: int) -> Caller:
    row = tokens.live(hashed)
    if row is None:
        raise _UnknownToken
    return Caller(
        role=row.role,
        namespaces=None if row.all_namespaces else tuple(row.namespaces),
        who=f"token {row.id}",
        read_scope=row.read_scope,
        user_id=row.read_user_id,
        session_id=row.read_session_id,
        speaks_for=row.user_id or row.read_user_id,
    )


class _Refusals:
    """The most recent unknown (token hash, time bucket) pairs, at most ``size`` (least recently
    refused first out)."""

    def __init__(self, size: int) -> None:
        self._seen: LRUCache[tuple[str, int], bool] = LRUCache(maxsize=size)
        self._lock = threading.Lock()  # cachetools' caches are not thread-safe

    def get(self, key: tuple[str, int]) -> bool:
        with self._lock:
            return self._seen.get(key, False)

    def add(self, key: tuple[str, int]) -> None:
        with self._lock:
            self._seen[key] = True


_refused = _Refusals(size=4096)
