"""memory.suggest's server time on a loom of many threads (issue 36 item 2: p95 at most 150 ms on
10,000 threads, as a prompt hook calls it).

    .venv/bin/python bench/suggest_latency.py [--threads 10000] [--embedded 0.5] [--calls 300]
                                              [--vocabulary 400]

On a fresh embedded PostgreSQL in a temporary LOOM_HOME (no broker, no worker): ``--threads``
memory threads are written in one loom through ``pipelines.memory.write`` (what memory.set
writes), each a sentence of a ``--vocabulary``-word vocabulary with one or two cues (two words of
it); a share ``--embedded`` of them get a vector of the local model's width, as that model
(random: what is measured is the statements, not the ranking). Then ``--calls`` memory.suggest
calls, each what a person might type (12 to 30 words of the vocabulary, a cue in one in three),
ten to a session, go through ``ops.registry.call`` in this process, as HTTP's handler calls it:
the time of each is the server's (the query's embedding by the local model included; HTTP's
parsing not). Then ``--packs`` context.pack calls, each a new session's first (what SessionStart
asks: the tapestry woven from the whole loom, within 1,000 tokens). Prints p50/p95/max of each;
the last stdout line is one JSON object. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import embedded_database, log, percentile, rounded, without_broker  # noqa: E402

NAMESPACE = "bench-suggest"
SEED = 36


def vocabulary(rng: random.Random, size: int) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(4, 9))))
    return sorted(words)


def seed(n: int, embedded: float, words: list[str], rng: random.Random) -> list[str]:
    """Write ``n`` threads in the namespace's default loom; the cues written."""
    from pgvector import Vector
    from sqlalchemy import text

    from models import db
    from models.base import utcnow
    from pipelines import memory
    from providers.embedders import get_embedder

    embedder = get_embedder()
    width = len(embedder.embed(["width"])[0])
    cues: list[str] = []
    with db.session() as s:
        loom = memory.default_loom(s, NAMESPACE)
    started = time.perf_counter()
    for batch in range(0, n, 500):
        with db.session() as s:
            for _ in range(min(500, n - batch)):
                thread_cues = [" ".join(rng.sample(words, 2)) for _ in range(rng.randint(1, 2))]
                cues += thread_cues
                content = " ".join(rng.choices(words, k=rng.randint(8, 24))) + "."
                new = memory.NewMemory(content, "Semantic", rng.random(), "Said", cues=thread_cues)
                row = memory.write(s, loom, new, utcnow())
                if row is not None and rng.random() < embedded:
                    vector = [rng.gauss(0, 1) for _ in range(width)]
                    s.execute(
                        text("UPDATE memory_threads SET vector = :v, model = :m WHERE id = :id"),
                        {"v": Vector(vector).to_text(), "m": embedder.name, "id": row.id},
                    )
        log(f"wrote {min(batch + 500, n)} threads in {time.perf_counter() - started:.0f} s")
    with db.session() as s:
        s.execute(text("ANALYZE memory_threads"))
    return cues


def said(words: list[str], cues: list[str], rng: random.Random) -> str:
    spoken = rng.choices(words, k=rng.randint(12, 30))
    if rng.random() < 1 / 3:
        spoken.insert(rng.randrange(len(spoken)), rng.choice(cues))
    return " ".join(spoken)


def measure(calls: int, words: list[str], cues: list[str], rng: random.Random) -> list[float]:
    from ops.caller import OPERATOR
    from ops.registry import call

    times = []
    for i in range(calls + 10):
        body = {"namespace": NAMESPACE, "thread_id": f"s-{i // 10}", "agent": "claude-code"}
        started = time.perf_counter()
        call("memory.suggest", OPERATOR, body | {"said": said(words, cues, rng)})
        if i >= 10:  # the first ten warm the embedder and the pool up
            times.append((time.perf_counter() - started) * 1000)
    return times


def measure_packs(packs: int) -> list[float]:
    """The time of a new session's first context.pack each: its tapestry woven from the loom."""
    from ops.caller import OPERATOR
    from ops.registry import call

    times = []
    for i in range(packs + 3):
        body = {"namespace": NAMESPACE, "thread_id": f"start-{i}", "agent": "claude-code"}
        started = time.perf_counter()
        call("context.pack", OPERATOR, body | {"subjects": ["billing-service"], "max_tokens": 1000})
        if i >= 3:  # the first three warm the pool up
            times.append((time.perf_counter() - started) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=10_000)
    parser.add_argument("--embedded", type=float, default=0.5)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--packs", type=int, default=30)
    # 400: every word said is in some 400 threads, a worst case for the lexical leg; English
    # threads share far fewer words once the stop words are out.
    parser.add_argument("--vocabulary", type=int, default=400)
    args = parser.parse_args()
    rng = random.Random(SEED)
    words = vocabulary(rng, args.vocabulary)
    with embedded_database("suggest"):
        without_broker()
        cues = seed(args.threads, args.embedded, words, rng)
        times = measure(args.calls, words, cues, rng)
        packs = measure_packs(args.packs)
    figures = {
        "threads": args.threads,
        "embedded": args.embedded,
        "calls": args.calls,
        "vocabulary": args.vocabulary,
        "p50_ms": rounded(percentile(times, 50), 1),
        "p95_ms": rounded(percentile(times, 95), 1),
        "max_ms": rounded(max(times), 1),
        "packs": args.packs,
        "pack_p50_ms": rounded(percentile(packs, 50), 1),
        "pack_p95_ms": rounded(percentile(packs, 95), 1),
        "pack_max_ms": rounded(max(packs), 1),
    }
    log(f"memory.suggest on {args.threads} threads: p50 {figures['p50_ms']} ms, p95 {figures['p95_ms']} ms")
    log(f"context.pack, a session's first: p50 {figures['pack_p50_ms']} ms, p95 {figures['pack_p95_ms']} ms")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
