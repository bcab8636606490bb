"""Who is calling: a token's role and namespaces, or the local operator (the CLI)."""

import hashlib
import secrets
import time
from dataclasses import dataclass
from functools import lru_cache

from sqlmodel import select

from models import db
from models.namespace import ROLES, ApiToken, name_problem, role_rank
from ops.errors import forbidden, invalid, unauthorized

TOKEN_PREFIX = "loom_"


@dataclass(frozen=True)
class Caller:
    role: str
    namespaces: tuple[str, ...] | None  # None: the operator, every namespace

    def require(self, role: str) -> None:
        if role_rank(self.role) < role_rank(role):
            raise forbidden(f"this op needs the {role} role; the token is {self.role}")

    def namespace(self, requested: str | None) -> str:
        """The namespace an op acts in: the one asked for, if covered, else the token's only one."""
        if requested is None:
            if self.namespaces is not None and len(self.namespaces) == 1:
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


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_token(namespaces: list[str], role: str) -> str:
    """Mint a token; only its hash is stored, so this is the one time it can be shown."""
    if role not in ROLES:
        raise invalid(f"role must be one of {', '.join(ROLES)}", "role")
    if not namespaces:
        raise invalid("at least one namespace is required", "namespace")
    for name in namespaces:
        if problem := name_problem(name):
            raise invalid(f"namespace {name!r} {problem}", "namespace")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with db.session() as s:
        s.add(ApiToken(token_hash=_hash(token), role=role, namespaces=sorted(set(namespaces))))
    return token


def authenticate(authorization: str | None) -> Caller:
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise unauthorized()
    caller = _known_token(_hash(token.strip()), int(time.monotonic() // TOKEN_CACHE_SECONDS))
    if caller is None:
        _known_token.cache_clear()  # an unknown token is asked again next time, never remembered
        raise unauthorized()
    return caller


# A capture hook appends turn after turn with one token: remember what a token grants for a few
# seconds (the second argument is the time bucket) instead of a query per request.
TOKEN_CACHE_SECONDS = 10


@lru_cache(maxsize=1024)
def _known_token(token_hash: str, _bucket: int) -> Caller | None:
    with db.session() as s:
        row = s.exec(
            select(ApiToken).where(ApiToken.token_hash == token_hash, ApiToken.revoked_at.is_(None))
        ).first()
    return None if row is None else Caller(role=row.role, namespaces=tuple(row.namespaces))
