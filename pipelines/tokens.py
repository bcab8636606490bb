"""The bearer tokens' rows (``api_tokens``): minted, listed, revoked, and a live one found by its
hash. ``ops.caller`` decides who may hold what; only the hash of a token is ever stored."""

from sqlmodel import col, select

from models import db
from models.base import utcnow
from models.namespace import ApiToken


def add(token: ApiToken) -> None:
    with db.session() as s:
        s.add(token)


def listed() -> list[ApiToken]:
    """Every token, revoked ones too, oldest first."""
    with db.session() as s:
        return list(s.exec(select(ApiToken).order_by(col(ApiToken.id))))


def revoke(token_id: int) -> bool:
    """Revoke a live token; False when there is no such live token."""
    with db.session() as s:
        row = s.get(ApiToken, token_id)
        if row is None or row.revoked_at is not None:
            return False
        row.revoked_at = utcnow()
        s.add(row)
    return True


def live(hashed: str) -> ApiToken | None:
    """The unrevoked token whose hash is ``hashed``, if any."""
    with db.session() as s:
        return s.exec(
            select(ApiToken).where(col(ApiToken.token_hash) == hashed, col(ApiToken.revoked_at).is_(None))
        ).first()
