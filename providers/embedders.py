"""Embedders: the local MiniLM model shipped in a PyPI wheel (default) and any OpenAI-compatible
``/v1/embeddings`` endpoint. Both return unit-length vectors, so cosine similarity is a dot product."""

import logging
import math
import os
import threading
from functools import lru_cache
from typing import Protocol

from models.settings import Settings, get_settings
from providers import minilm
from providers.minilm import LocalMiniLM

log = logging.getLogger(__name__)


class EmbedderUnavailable(RuntimeError):
    """The embedder cannot answer now (not loadable, endpoint down, bad answer)."""


class Embedder(Protocol):
    name: str
    dimensions: int

    def embed(self, texts: list[str]) -> list[list[float]]: ...


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
    return minilm.NAME if settings.embed_provider == "local" else settings.embed_model


def configured_dimensions(settings: Settings | None = None) -> int:
    settings = settings or get_settings()
    return minilm.DIMENSIONS if settings.embed_provider == "local" else settings.embed_dimensions


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
        try:
            return LocalMiniLM(settings.embed_precision)
        except minilm.Unavailable as exc:
            raise EmbedderUnavailable(str(exc)) from exc
    if settings.embed_provider == "openai":
        return OpenAIEmbedder(settings)
    raise EmbedderUnavailable(f"unknown LOOM_EMBED_PROVIDER {settings.embed_provider!r}")


# How long a stopping process waits for the embedder's loading thread (a first start may be
# building the ONNX files: minutes on a loaded machine).
LOAD_GRACE_SECONDS = 5.0


def load_in_background() -> threading.Thread:
    """Build the embedder on a thread of its own, so a process's first call does not wait seconds
    for the model to load (the API's first search, the worker's first batch). A process that
    started it ends with ``settle``."""

    def load() -> None:
        try:
            get_embedder()
        except Exception as exc:
            log.warning("embedder not available yet: %s", exc)

    thread = threading.Thread(target=load, name="embedder-load", daemon=True)
    thread.start()
    return thread


def settle(loading: threading.Thread, seconds: float = LOAD_GRACE_SECONDS) -> None:
    """The last step of a process that loads the embedder in the background, once its work is
    stopped: wait for the loading thread, and if it is still building, end the process here (exit
    0, logs flushed). An interpreter shutting down while ONNX Runtime builds its session on another
    thread aborts (std::terminate; a Ctrl-C right after start did); a build cut short leaves its
    cache whole (it is written to a scratch file, then renamed)."""
    loading.join(seconds)
    if loading.is_alive():
        log.info("the embedder is still loading: exiting without it")
        logging.shutdown()
        os._exit(0)
