"""Coding-session threads on the server (issue 14): upsert latency for threads of 10, 100 and
1,000 messages, and full-text search over 10,000 threads.

On a fresh embedded PostgreSQL in a temporary LOOM_HOME (nothing else runs), through
``ops.coding_threads`` in this process (the HTTP layer adds its parse and its thread hop):

1. For each size, ``--rounds`` threads are created, then each is upserted again with one more
   message (the common case of a sync: the same thread, a little longer), timed per upsert.
   Messages are LongMemEval turns, so their length is a real conversation's.
2. ``--threads`` threads of 20 messages are loaded, then ``--queries`` searches (two of the
   longer words of a random message: what a developer searches by) are timed through ``search``,
   and ``--queries`` by a commit SHA prefix and by a branch.

Progress goes to stderr; the last stdout line is one JSON object. Not part of the test suite.
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
from longmemeval import DEFAULT_DATA, load_records  # noqa: E402


def corpus(data: Path) -> list[str]:
    texts = [
        turn["content"]
        for record in load_records(data)
        for session in record["haystack_sessions"]
        for turn in session
    ]
    return [text for text in texts if text.strip()]


def a_thread(texts: list[str], start: int, count: int):
    from loom.threads import MessageSnapshot, Thread

    thread = Thread(git_branch=f"feature/{start % 97}", git_remote_url="github.com/acme/api")
    thread.metadata.title = texts[start % len(texts)][:60]
    thread.git_commits = [f"{random.getrandbits(160):040x}"]
    thread.conversation.messages = [
        MessageSnapshot(role="user" if i % 2 == 0 else "assistant", content=texts[(start + i) % len(texts)])
        for i in range(count)
    ]
    return thread


def upserts(texts: list[str], size: int, rounds: int) -> dict:
    from loom.threads import MessageSnapshot

    from ops import coding_threads
    from ops.caller import OPERATOR

    created, again = [], []
    for round_ in range(rounds):
        thread = a_thread(texts, round_ * size, size)
        started = time.perf_counter()
        stored = coding_threads.upsert(OPERATOR, thread.model_dump(mode="json"), namespace="bench")
        created.append((time.perf_counter() - started) * 1000)
        stored["conversation"]["messages"].append(
            MessageSnapshot(role="user", content="and one more thing").model_dump(mode="json")
        )
        started = time.perf_counter()
        coding_threads.upsert(OPERATOR, stored, namespace="bench")
        again.append((time.perf_counter() - started) * 1000)
    body = len(thread.model_dump_json())
    return {
        "bytes": body,
        "create_ms_p50": rounded(percentile(created, 50)),
        "create_ms_p95": rounded(percentile(created, 95)),
        "update_ms_p50": rounded(percentile(again, 50)),
        "update_ms_p95": rounded(percentile(again, 95)),
    }


def searches(texts: list[str], threads: int, queries: int) -> dict:
    from ops import coding_threads
    from ops.caller import OPERATOR

    commits = []
    started = time.perf_counter()
    for n in range(threads):
        thread = a_thread(texts, n * 20, 20)
        coding_threads.upsert(OPERATOR, thread.model_dump(mode="json"), namespace="search")
        commits.append(thread.git_commits[0])
    log(f"{threads:,} threads loaded in {time.perf_counter() - started:.0f} s")
    from models import db

    # As autovacuum would have by then: statistics, and the GIN indexes' pending lists merged
    # (a long pending list makes the planner shun the indexes).
    with db.autocommit() as conn:
        conn.execute("VACUUM ANALYZE coding_threads")
    words, by_sha, by_branch, hits = [], [], [], 0
    rng = random.Random(7)
    for _ in range(queries):
        # Two words a developer would search by: the longer words of a message of the corpus.
        words_of = [w.strip(".,:;!?()\"'").lower() for w in texts[rng.randrange(len(texts))].split()]
        long_words = [w for w in words_of if len(w) >= 7 and w.isalpha()] or ["ledger"]
        query = " ".join(rng.sample(long_words, min(2, len(long_words))))
        started = time.perf_counter()
        hits += len(coding_threads.search(OPERATOR, query, 20, namespace="search").threads)
        words.append((time.perf_counter() - started) * 1000)
        sha = commits[rng.randrange(len(commits))][:7]
        started = time.perf_counter()
        coding_threads.search(OPERATOR, sha, 20, namespace="search")
        by_sha.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        coding_threads.search(OPERATOR, f"feature/{rng.randrange(97)}", 20, namespace="search")
        by_branch.append((time.perf_counter() - started) * 1000)
    return {
        "threads": threads,
        "words_ms_p50": rounded(percentile(words, 50)),
        "words_ms_p95": rounded(percentile(words, 95)),
        "sha_prefix_ms_p50": rounded(percentile(by_sha, 50)),
        "sha_prefix_ms_p95": rounded(percentile(by_sha, 95)),
        "branch_ms_p50": rounded(percentile(by_branch, 50)),
        "branch_ms_p95": rounded(percentile(by_branch, 95)),
        "mean_hits": round(hits / queries, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--threads", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--keep-home", action="store_true")
    args = parser.parse_args()

    without_broker()  # nothing is indexed here: this measures the write and the search
    texts = corpus(args.data)
    out: dict = {}
    with embedded_database("threads", args.keep_home):
        for size in (10, 100, 1_000):
            out[f"upsert_{size}"] = upserts(texts, size, args.rounds)
            log(f"{size} messages: {out[f'upsert_{size}']}")
        out["search"] = searches(texts, args.threads, args.queries)
        log(f"search: {out['search']}")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
