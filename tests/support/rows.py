"""What the database holds, read directly: what no op answers (a run's subject, stored lexemes)."""

from sqlalchemy import text
from sqlmodel import select

from models import db
from models.conversation import Embedding
from models.settings import get_settings


def embedding_subject(turn_id: int) -> str:
    """The subject of the embedding run of a turn's embedding row."""
    with db.session() as s:
        return f"embedding:{s.exec(select(Embedding.id).where(Embedding.turn_id == turn_id)).one()}"


def context_of(namespace: str, thread_id: str, msg_id: str, agent: str = "default") -> list[str] | None:
    """The lexemes of a turn's lexical context (``pipelines.contexts``), sorted; None for none."""
    with db.session() as s:
        return s.execute(
            text(
                "SELECT tsvector_to_array(context_lexemes) FROM turns WHERE namespace = :ns "
                "AND thread_id = :thread AND msg_id = :msg AND agent = :agent"
            ),
            {"ns": namespace, "thread": thread_id, "msg": msg_id, "agent": agent},
        ).scalar_one()


def lexemes_of(content: str) -> list[str]:
    """A text's lexemes as ``turns.lexemes`` holds them, sorted."""
    with db.session() as s:
        return s.execute(
            text("SELECT tsvector_to_array(to_tsvector('english', :c))"), {"c": content}
        ).scalar_one()


def redis_config_set(client, name: str, value) -> None:
    """CONFIG SET on the embedded Redis, where CONFIG answers to its renamed command only."""
    from services import redis

    client.execute_command(redis.admin_command(get_settings().home, "CONFIG"), "SET", name, value)
