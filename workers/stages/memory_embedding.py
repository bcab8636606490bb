"""The memory threads' embedding stage: the turns' batching body over memory threads. A run's
subject is a thread's ``row_id``; its version, the first 16 characters of the embedded text's
digest, so a reframed thread gets a run of its own."""

from pipelines import memory
from workers.bodies import Vectors, embedded_in_batches
from workers.stages import Stage, register

STAGE = "memory_embedding"
VECTORS = Vectors(memory.load_pending, memory.store_vectors, memory.record_error)


def embed_memory_threads(run_ids: list[int]) -> None:
    embedded_in_batches(MEMORY_EMBEDDING, run_ids, VECTORS)


MEMORY_EMBEDDING = register(Stage(STAGE, embed_memory_threads, subject_kind="memory_thread"))
