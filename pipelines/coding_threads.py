"""Finding coding-session threads: full text over title, branch, remote, tags and messages, a
commit SHA prefix, a remote URL or a branch; the best ranked of the most recent ``RANK_POOL``
matches a reader may see."""

import re

from sqlmodel import Session

from models.queries import coding_threads as queries

RANK_POOL = 500  # the most recent matches ranked (ranking reads each match's whole lexeme vector)
HEX = re.compile(r"^[0-9a-f]{4,40}$")


def _like(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def matching(s: Session, namespace: str, owner: str, query: str, limit: int) -> list:
    """(id, rank) of the threads of ``namespace`` that ``owner`` may read (their own, or shared
    with the organization or public) matching ``query``, best first."""
    sha = HEX.match(query.lower())
    params = {
        "q": query,
        "hex": bool(sha),
        "sha_prefix": f"{query.lower()}:*" if sha else "",
        "anywhere": f"%{_like(query)}%",
        "ns": namespace,
        "owner": owner,
        "limit": limit,
        "pool": RANK_POOL,
    }
    return s.execute(queries.SEARCH, params).all()
