"""LongMemEval (oracle) retrieval through Loom's own search: recall@5 and recall@10.

    .venv/bin/python bench/retrieval.py [--sessions N] [--clients 6] [--data PATH] [--details FILE]
                                        [--precisions int8,fp32] [--keep-home] [--dated]

Every session of the file (deduplicated by session id) goes into one namespace over HTTP, one Loom
thread per session (thread_id = session id, msg_id = ``<session_id>:<turn index>``; with
``--dated``, ts the session's date plus a second a turn, as the data dates it, and each question
asked from its own date, the search's ``now``), appended by
``--clients`` concurrent clients; then the benchmark waits until the stage ledger has no pending or
running run (turns that read as secrets are screened and never embedded: ``not_embedded``). Each
question is then asked as ``conversation.search`` (limit 10, the default similarity floor). recall@k
is the fraction of the question's ``has_answer`` turns found in the top k, averaged over questions
that have at least one such turn; also per ``question_type``. Each of ``--modes`` (``semantic``,
``lexical``, ``hybrid``, ``hybrid@W`` for a lexical weight W) is asked in turn over the same data.

``--sessions N`` keeps the first N sessions and the questions whose answer sessions are all among
them (a quick run). ``--precisions int8,fp32`` runs the whole measurement once per local-model
precision (``LOOM_EMBED_PRECISION``) and prints each, with the recall@10 difference. Progress goes
to stderr; the last stdout line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx  # noqa: E402
from appender import Appender  # noqa: E402
from harness import (  # noqa: E402
    Loom,
    code_version,
    embedded_count,
    ledger_counts,
    live_runs,
    log,
    percentile,
    progress,
    rounded,
    warm_up,
    watch,
    without_vector,
)
from longmemeval import DEFAULT_DATA, load_records, msg_id, said_at, unique_sessions  # noqa: E402

NAMESPACE = "bench-longmemeval"
WARM_UP_NAMESPACE = "bench-warm-up"
LIMIT = 10
KS = (5, 10)


def relevant_turns(record: dict) -> set[str]:
    """The msg ids of the question's has_answer turns, across its haystack sessions."""
    return {
        msg_id(session_id, index)
        for session_id, session in zip(
            record["haystack_session_ids"], record["haystack_sessions"], strict=True
        )
        for index, turn in enumerate(session)
        if turn.get("has_answer")
    }


def ingest(loom: Loom, token: str, threads: list, clients: int) -> dict:
    with loom.connect() as conn:
        appender = Appender(loom.base_url, token, NAMESPACE, threads, clients=clients)

        log(f"appending {appender.stats.requested} turns in {len(threads)} threads with {clients} clients")
        stats = appender.start()
        done_at = watch(
            conn,
            appender,
            lambda c: live_runs(c) == 0,  # checked once the appends are done: every run exists
            lambda c: progress(c, NAMESPACE),
            interval=0.2,
            report_every=15.0,
            timeout=4 * 3600,
        )
        appender.join()
        seconds = done_at - stats.started
        embedded = embedded_count(conn, NAMESPACE)
        ledger = ledger_counts(conn, NAMESPACE)
        missing = without_vector(conn, NAMESPACE)
    log(f"ingested: {embedded} turns embedded, {missing} without a vector, in {seconds:.1f}s")
    return {
        "embedded": embedded,
        "not_embedded": missing,
        "screened_at_append": stats.embedding["not_embedded"],
        "embedding_runs": dict(ledger),
        "ingest_seconds": round(seconds, 1),
        "ingest_turns_per_s": rounded(embedded / seconds, 1),
        **stats.summary(),
    }


def search_body(mode: str) -> dict:
    """``semantic``, ``lexical``, ``hybrid`` or ``hybrid@W`` (W the lexical weight) as request fields."""
    name, _, weight = mode.partition("@")
    return {"search_mode": name, **({"lexical_weight": float(weight)} if weight else {})}


def ask(
    loom: Loom, token: str, questions: list[dict], details: Path | None, mode: str, dated: bool = False
) -> dict:
    headers = {"Authorization": f"Bearer {token}"}
    recall = {k: [] for k in KS}
    by_type: dict[str, dict[int, list[float]]] = defaultdict(lambda: {k: [] for k in KS})
    latencies, modes, hit_counts = [], defaultdict(int), []
    skipped = 0
    out = details.open("w") if details else None
    try:
        with httpx.Client(base_url=loom.base_url, headers=headers, timeout=120.0) as client:
            for n, record in enumerate(questions, 1):
                relevant = relevant_turns(record)
                if not relevant:
                    skipped += 1
                    continue
                began = time.perf_counter()
                response = client.post(
                    "/v1/conversation.search",
                    json={
                        "namespace": NAMESPACE,
                        "query": record["question"],
                        "limit": LIMIT,
                        **search_body(mode),
                        **({"now": said_at(record["question_date"])} if dated else {}),
                    },
                )
                latencies.append((time.perf_counter() - began) * 1000)
                response.raise_for_status()
                answer = response.json()
                modes[answer["mode"]] += 1
                ranked = [hit["msg_id"] for hit in answer["hits"]]
                hit_counts.append(len(ranked))
                scores = {k: len(relevant & set(ranked[:k])) / len(relevant) for k in KS}
                for k in KS:
                    recall[k].append(scores[k])
                    by_type[record["question_type"]][k].append(scores[k])
                if out:
                    row = {
                        "question_id": record["question_id"],
                        "question_type": record["question_type"],
                        "question": record["question"],
                        "relevant": sorted(relevant),
                        "mode": mode,
                        "hits": [
                            [hit["msg_id"], hit["similarity"], hit["lexical_score"]] for hit in answer["hits"]
                        ],
                        **{f"recall_at_{k}": scores[k] for k in KS},
                    }
                    out.write(json.dumps(row) + "\n")
                if n % 100 == 0:
                    so_far = sum(recall[10]) / len(recall[10])
                    log(f"asked {n}/{len(questions)}; recall@10 so far {so_far:.3f}")
    finally:
        if out:
            out.close()

    def mean(values: list[float]) -> float | None:
        return round(sum(values) / len(values), 4) if values else None

    return {
        "recall_at_5": mean(recall[5]),
        "recall_at_10": mean(recall[10]),
        "questions": len(recall[10]),
        "questions_without_answer_turns": skipped,
        "by_type": {
            qtype: {"recall_at_5": mean(r[5]), "recall_at_10": mean(r[10]), "questions": len(r[10])}
            for qtype, r in sorted(by_type.items())
        },
        "search_modes": dict(modes),
        "search_p50_ms": rounded(percentile(latencies, 50)),
        "search_p95_ms": rounded(percentile(latencies, 95)),
        "mean_hits_returned": rounded(sum(hit_counts) / len(hit_counts) if hit_counts else None),
        "questions_with_no_hits": sum(1 for n in hit_counts if n == 0),
    }


def exact_recall(loom: Loom, questions: list[dict], min_similarity: float, precision: str) -> dict:
    """The same recall by brute force over the stored vectors (no HNSW index), with the query
    embedded here by the same model: what the index loses, if anything."""
    import numpy as np

    from providers.minilm import LocalMiniLM

    with loom.connect() as conn:
        rows = conn.execute(
            "SELECT msg_id, vector::text FROM embeddings WHERE namespace = %s AND vector IS NOT NULL",
            (NAMESPACE,),
        ).fetchall()
    ids = [row[0] for row in rows]
    matrix = np.array([json.loads(row[1]) for row in rows], dtype=np.float32)
    asked = [q for q in questions if relevant_turns(q)]
    model = LocalMiniLM(precision)  # the precision Loom ran with
    queries = np.array(model.embed([q["question"] for q in asked]), dtype=np.float32)
    recall = {k: [] for k in KS}
    for record, scores in zip(asked, queries @ matrix.T, strict=True):
        relevant = relevant_turns(record)
        ranked = [ids[i] for i in np.argsort(-scores)[:LIMIT] if scores[i] >= min_similarity]
        for k in KS:
            recall[k].append(len(relevant & set(ranked[:k])) / len(relevant))
    return {f"exact_recall_at_{k}": round(sum(v) / len(v), 4) if v else None for k, v in recall.items()}


def measure(args, threads: list, questions: list[dict], precision: str) -> dict:
    """Ingest every thread into a fresh Loom running ``precision``, then ask every question."""
    from models.settings import get_settings

    log(f"measuring with LOOM_EMBED_PRECISION={precision}")
    with Loom(keep_home=args.keep_home, env={"LOOM_EMBED_PRECISION": precision}) as loom:
        token = loom.token([NAMESPACE, WARM_UP_NAMESPACE])
        loom.logging_on(NAMESPACE)
        loom.logging_on(WARM_UP_NAMESPACE)
        warm_up(loom, token, WARM_UP_NAMESPACE)
        ingested = ingest(loom, token, threads, args.clients)
        by_mode = {}
        for mode in args.modes.split(","):
            asked_at = time.perf_counter()
            scores = ask(loom, token, questions, args.details, mode, args.dated)
            scores["search_seconds"] = round(time.perf_counter() - asked_at, 1)
            log(f"{mode}: recall@5 {scores['recall_at_5']}, recall@10 {scores['recall_at_10']}")
            by_mode[mode] = scores
        if args.exact:
            min_similarity = get_settings().conversation_search_min_similarity
            by_mode["semantic_exact"] = exact_recall(loom, questions, min_similarity, precision)
    return {"modes": by_mode, "not_embedded": ingested.pop("not_embedded"), **ingested}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=None, help="only the first N sessions (quick run)")
    parser.add_argument("--clients", type=int, default=6, help="concurrent HTTP clients (default 6)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--details", type=Path, default=None, help="write one JSON line per question here")
    parser.add_argument(
        "--exact", action="store_true", help="also brute-force recall over the stored vectors (no index)"
    )
    parser.add_argument("--keep-home", action="store_true", help="keep LOOM_HOME (logs, database)")
    parser.add_argument(
        "--dated",
        action="store_true",
        help=(
            "append each turn at its session's date (30 monthly partitions for LongMemEval) and ask each "
            "question from its own date (the search's now)"
        ),
    )
    parser.add_argument("--precisions", default=None, help="local-model precisions, e.g. int8,fp32")
    parser.add_argument(
        "--modes",
        default="semantic,lexical,hybrid",
        help="search modes asked in turn; hybrid@W sets the lexical weight (e.g. hybrid@0.7)",
    )
    args = parser.parse_args(argv)

    from models.settings import get_settings

    began = time.perf_counter()
    code = code_version()  # before Loom starts: the files may change while it runs
    records = load_records(args.data)
    sessions = unique_sessions(records, dated=args.dated)
    if args.sessions is not None:
        sessions = dict(list(sessions.items())[: args.sessions])
    questions = [r for r in records if set(r["answer_session_ids"]) <= sessions.keys()]
    threads = [turns for turns in sessions.values() if turns]
    log(f"{len(sessions)} sessions, {sum(len(t) for t in threads)} turns, {len(questions)} questions")

    precisions = (args.precisions or get_settings().embed_precision).split(",")
    measured = {precision: measure(args, threads, questions, precision) for precision in precisions}
    common = {
        "sessions": len(sessions),
        "turns": sum(len(t) for t in threads),
        "limit": LIMIT,
        "min_similarity": get_settings().conversation_search_min_similarity,
        "clients": args.clients,
        "cpus": os.cpu_count(),
        "code": code,
    }
    if len(precisions) == 1:
        result = {**measured[precisions[0]], **common, "precision": precisions[0]}
    else:
        result = {**common, "precisions": measured}
        if {"int8", "fp32"} <= set(precisions):
            first = args.modes.split(",")[0]
            delta = (
                measured["int8"]["modes"][first]["recall_at_10"]
                - measured["fp32"]["modes"][first]["recall_at_10"]
            )
            result["recall_at_10_int8_minus_fp32"] = round(delta, 4)
    result["seconds_total"] = round(time.perf_counter() - began, 1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
