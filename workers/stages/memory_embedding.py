"""The memory threads' embedding stage: the turns' batching body over memory threads. A run's
subject is a thread's ``row_id``; its version, the first 16 characters of the embedded text's
digest, so a reframed thread gets a run of its own."""

from models.stages import MEMORY_EMBEDDING
from pipelines import memory
from workers.bodies import Vectors, embedded_in_batches
from workers.stages import register

VECTORS = Vectors(memory.load_pending, memory.store_vectors, memory.record_error)


def embed_memory_threads(run_ids: list[int]) -> None:
    embedded_in_batches(MEMORY_EMBEDDING, run_ids, VECTORS)


register(MEMORY_EMBEDDING, embed_memory_threads)
