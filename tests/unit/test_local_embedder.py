"""The local MiniLM embedder: length-sorted micro-batches on a shared pool must still give every
caller its own texts' vectors, in its order, however many callers run at once."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from providers.embedders import MICRO_BATCH, LocalMiniLM


@pytest.fixture(scope="module")
def model() -> LocalMiniLM:
    return LocalMiniLM()


def texts(caller: int) -> list[str]:
    # Lengths vary a lot and not in order, so sorting really reorders them.
    return [f"caller {caller} text {i}: " + "words " * ((i * 37) % 90) for i in range(3 * MICRO_BATCH + 5)]


def test_concurrent_calls_answer_each_caller_in_its_own_order(model):
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


def test_an_empty_call_embeds_nothing(model):
    assert model.embed([]) == []
