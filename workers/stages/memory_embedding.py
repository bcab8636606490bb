"""The memory threads' embedding stage: the turns' batching body (``embed_batch``) over memory
threads. A run's subject is a thread's ``row_id``; its version, the first 16 characters of the
embedded text's digest, so a reframed thread gets a run of its own."""

from pipelines import memory
from workers.stages import Stage, register
from workers.stages.embedding import Vectors, embed_batch

STAGE = "memory_embedding"
VECTORS = Vectors(memory.load_pending, memory.store_vectors, memory.record_error)


def embed_memory_threads(run_ids: list[int]) -> None:
    embed_batch(MEMORY_EMBEDDING, run_ids, VECTORS)


MEMORY_EMBEDDING = register(Stage(STAGE, embed_memory_threads, subject_kind="memory_thread"))
