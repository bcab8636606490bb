"""Vectors of the local embedder's test texts as sentence-transformers computes them on PyTorch,
recorded so the tests check Loom's ONNX builds against the reference implementation without
installing PyTorch. Made again (only if the texts change) with sentence-transformers installed:

    .venv/bin/pip install sentence-transformers && .venv/bin/python -m tests.support.minilm_reference
"""

import json
from pathlib import Path

import numpy as np

RECORDED = Path(__file__).parents[1] / "unit" / "data" / "minilm_sentence_transformers.json"

# Turns of the kinds Loom stores: chat, code, numbers, other scripts, one past the token cut.
TEXTS = [
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


def recorded() -> np.ndarray:
    data = json.loads(RECORDED.read_text())
    assert data["texts"] == TEXTS, "the texts changed: record their vectors again (see this module)"
    return np.array(data["vectors"], dtype=np.float32)


def record() -> None:
    from sentence_transformers import SentenceTransformer

    from providers import minilm

    model = SentenceTransformer(str(minilm.model_dir()), device="cpu", local_files_only=True)
    vectors = model.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)
    RECORDED.parent.mkdir(parents=True, exist_ok=True)
    rounded = [[round(float(x), 7) for x in vector] for vector in vectors]
    RECORDED.write_text(json.dumps({"texts": TEXTS, "vectors": rounded}) + "\n")


if __name__ == "__main__":
    record()
