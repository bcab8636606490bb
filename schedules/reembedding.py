"""The re-embedding pass, after the configured model changed: search compares only vectors of the
query's model, so until this pass brings them over, turns and memory threads whose vector another
model made are found by no vector search. Each pass revives the succeeded embedding runs of up to
``limit`` of each, and wakes their stage once (its claim fills a batch from the pending runs, and
a full batch wakes the next)."""

from sqlalchemy import TextClause
from sqlmodel import col, select

from models import db
from models.queries import embeddings, memory
from models.stage_run import StageRun
from models.stages import EMBEDDING, MEMORY_EMBEDDING, Stage
from providers.embedders import configured_model
from workers import broker, ledger

PLANES: tuple[tuple[Stage, TextClause], ...] = (
    (EMBEDDING, embeddings.OUTDATED_EMBEDDING_RUNS),
    (MEMORY_EMBEDDING, memory.OUTDATED_MEMORY_EMBEDDING_RUNS),
)


def reembed_outdated(limit: int) -> list[int]:
    """The runs revived and sent, at most ``limit`` of each plane."""
    sent = []
    for stage, outdated in PLANES:
        with db.session() as s:
            ids = list(s.execute(outdated, {"model": configured_model(), "limit": limit}).scalars())
        if ids:
            sent += ledger.revive(select(col(StageRun.id)).where(col(StageRun.id).in_(ids)))
            broker.send(stage, [], unless_waiting=True)
    return sent
