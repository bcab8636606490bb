"""The memory threads' embedding stage: the turns' batching body over memory threads. A run's
subject is a thread's ``row_id``; its version, the first 16 characters of the embedded text's
digest, so a reframed thread gets a run of its own."""

from models.stages import MEMORY_EMBEDDING
from pipelines.memory_embedding import load_pending, record_error, store_vectors
from workers.bodies import Vectors, embedded_in_batches
from workers.stages import register

VECTORS = Vectors(load_pending, store_vectors, record_error)


def embed_memory_threads(run_ids: list[int]) -> None:
    embedded_in_batches(MEMORY_EMBEDDING, run_ids, VECTORS)


register(MEMORY_EMBEDDING, embed_memory_threads)
