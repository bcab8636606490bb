"""The embedding stage: a batch of turns' embedding rows embedded in one model call
(``workers.bodies.embedded_in_batches`` over ``pipelines.embedding``)."""

from models.stages import EMBEDDING
from pipelines import embedding
from workers.bodies import Vectors, embedded_in_batches
from workers.stages import register

TURN_VECTORS = Vectors(embedding.load, embedding.store, embedding.record_error)


def embed_turns(run_ids: list[int]) -> None:
    embedded_in_batches(EMBEDDING, run_ids, TURN_VECTORS)


register(EMBEDDING, embed_turns)
