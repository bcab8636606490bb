"""The local MiniLM embedder: the int8 ONNX build is the default and stays close to the fp32
vectors, tokenising and pooling exactly as sentence-transformers does; length-sorted
micro-batches on a shared pool still give every caller its own texts' vectors, in its order."""

import hashlib
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from models.settings import Settings
from providers import minilm, minilm_onnx
from providers.minilm import MICRO_BATCH, LocalMiniLM

# Turns of the kinds Loom stores: chat, code, numbers, other scripts, one past the token cut.
FIXED = [
    "We moved invoices to the new ledger in March.",
    "Can you remind me which cron line runs the nightly export?",
    "def rotate(schedule):\n    return schedule.replace(hour=(schedule.hour + 1) % 24)",
    "The build failed: ModuleNotFoundError: No module named 'psycopg' on the CI runner.",
    "I'd like a vegetarian recipe with chickpeas, spinach and something crunchy on top.",
    "Réunion à 14h30 avec l'équipe produit pour revoir la feuille de route du trimestre.",
    "東京の天気は明日晴れるでしょうか？",
    "ok",
    "Temperature readings: 21.5, 22.1, 19.8, 23.4 and 20.0 degrees across the five sensors.",
    "The quick brown fox jumps over the lazy dog. " * 80,  # past the 256-token cut
]


@pytest.fixture(scope="module")
def int8() -> LocalMiniLM:
    return LocalMiniLM("int8")


@pytest.fixture(scope="module")
def fp32() -> LocalMiniLM:
    return LocalMiniLM("fp32")


def test_the_default_local_embedder_is_the_int8_build_and_did_not_fall_back(int8):
    assert Settings().embed_precision == "int8"
    assert int8.precision == "int8"


def test_int8_vectors_stay_within_the_cosine_bound_of_fp32(int8, fp32):
    cosines = (np.array(int8.embed(FIXED)) * np.array(fp32.embed(FIXED))).sum(axis=1)
    assert cosines.mean() >= 0.99 and cosines.min() >= 0.98, cosines


def test_the_onnx_path_tokenises_and_pools_as_sentence_transformers_does(fp32):
    """An fp32 ONNX build through the int8 path's tokenizer and pooling gives PyTorch's vectors."""
    onnx = minilm.onnx_forward(minilm.model_dir(), "fp32")
    for start in range(0, len(FIXED), MICRO_BATCH):
        texts = FIXED[start : start + MICRO_BATCH]
        assert np.allclose(np.array(onnx(texts)), np.array(fp32.embed(texts)), atol=1e-5)


def test_the_int8_embedder_runs_without_pytorch(int8):
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys; from providers.minilm import LocalMiniLM; "
         "m = LocalMiniLM('int8'); m.embed(['x']); print(m.precision, 'torch' in sys.modules)"],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    assert loaded.stdout.split() == ["int8", "False"]


def test_a_damaged_cached_build_is_made_again(int8):
    built = minilm_onnx.path_for(minilm.MINILM_SHA256, "int8")
    built.write_bytes(built.read_bytes()[:1000])  # a build cut short
    again = LocalMiniLM("int8")
    assert again.precision == "int8"
    assert minilm_onnx.file_sha256(built) == built.with_suffix(".sha256").read_text().strip()
    assert np.allclose(np.array(again.embed(FIXED)), np.array(int8.embed(FIXED)), atol=1e-6)


def texts(caller: int) -> list[str]:
    # Lengths vary a lot and not in order, so sorting really reorders them.
    return [f"caller {caller} text {i}: " + "words " * ((i * 37) % 90) for i in range(3 * MICRO_BATCH + 5)]


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
