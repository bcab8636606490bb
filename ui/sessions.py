"""Dashboard sign-ins: a bearer token is checked once, then the browser holds a random session
id in an HTTP-only, SameSite=Strict cookie. The database keeps hashes only (of the id and of the
token), so a leaked table signs nobody in; revoking the token ends its sessions at once."""

import hmac
import secrets
from dataclasses import dataclass
from datetime import timedelta

from sqlmodel import col, delete, select

from models import db
from models.base import utcnow
from models.settings import get_settings
from models.ui_session import UiSession
from ops.caller import Caller, authenticate, by_token_hash, token_hash
from ops.errors import OpError, forbidden

COOKIE = "loom_session"


@dataclass(frozen=True)
class SignedIn:
    caller: Caller
    csrf: str  # the session's secret every form carries back


def lifetime() -> timedelta:
    return timedelta(hours=get_settings().ui_session_hours)


def sign_in(token: str, replacing: str | None = None) -> tuple[str, SignedIn]:
    """A new session for ``token`` (401 when it is not a live token): the cookie's value and who.
    The session the browser held before (``replacing``) ends: a sign-in always starts a new id."""
    caller = authenticate(f"Bearer {token.strip()}")
    sign_out(replacing)
    session_id, now = secrets.token_urlsafe(32), utcnow()
    row = UiSession(
        id_hash=token_hash(session_id),
        token_hash=token_hash(token.strip()),
        csrf=secrets.token_urlsafe(32),
        created_at=now,
        expires_at=now + lifetime(),
    )
    with db.session() as s:
        s.exec(delete(UiSession).where(col(UiSession.expires_at) < now))  # the expired go as new ones come
        s.add(row)
    return session_id, SignedIn(caller, row.csrf)


def current(session_id: str | None) -> SignedIn | None:
    """Who the cookie signs in, or None (no cookie, an expired session, a revoked token)."""
    if not session_id or len(session_id) > 100:
        return None
    with db.session() as s:
        row = s.exec(
            select(UiSession).where(
                col(UiSession.id_hash) == token_hash(session_id), col(UiSession.expires_at) > utcnow()
            )
        ).first()
    if row is None:
        return None
    try:
        return SignedIn(by_token_hash(row.token_hash), row.csrf)
    except OpError:
        return None


def sign_out(session_id: str | None) -> None:
    if session_id:
        with db.session() as s:
            s.exec(delete(UiSession).where(col(UiSession.id_hash) == token_hash(session_id)))


def check_csrf(signed_in: SignedIn, submitted: str | None) -> None:
    if not submitted or not hmac.compare_digest(submitted.encode(), signed_in.csrf.encode()):
        raise forbidden("the form's CSRF token is missing or stale; reload the page")
