"""A namespace's Record switch: whether its conversations are kept. Appends, creates, updates and
ingests read it (the append in its own statement); saved messages ignore it."""

from sqlalchemy.dialects.postgresql import insert
from sqlmodel import Session

from models.base import utcnow
from models.namespace import Namespace


def recording(s: Session, namespace: str) -> bool:
    """The namespace's switch; a namespace with no row does not record (fails closed)."""
    row = s.get(Namespace, namespace)
    return bool(row and row.conversation_logging_enabled)


def switch(s: Session, namespace: str, enabled: bool) -> None:
    """Turn the namespace's recording on or off, making its row when it has none."""
    now = utcnow()
    s.exec(
        insert(Namespace)
        .values(name=namespace, conversation_logging_enabled=enabled, created_at=now, updated_at=now)
        .on_conflict_do_update(
            index_elements=["name"], set_={"conversation_logging_enabled": enabled, "updated_at": now}
        )
    )
