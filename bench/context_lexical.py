"""The lexical leg as built, with and without turns' contexts, on a development set: the turns
written through conversation.append's write path (so the append gives each its context), the
questions asked through ``pipelines.search.by_lexical``; to compare with the offline replica's
lexical recall (``context_replica.py``, variants "turn alone (shipped)" and "prev whole if <= 200
w1.0 lam1.0").

    .venv/bin/python bench/context_lexical.py [--data dialogues|longmemeval]

No embedder and no worker: the lexical leg alone. Then every thread's contexts are rebuilt from
its turns (``pipelines.contexts.rebuild``, as the contexts stage fills turns written before
contexts), timed, and asked again. The corpus is what one search reads, as in the
replica: one namespace a conversation for the dialogue set, one for all of LongMemEval."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from context_replica import DATA, load  # noqa: E402
from harness import RECORDING, embedded_database, log  # noqa: E402


def recall_at_10(data) -> float:
    from models import db
    from pipelines import lexical, search

    lexical._corpus.clear()
    place = {(t.session, t.index): n for n, t in enumerate(data.turns)}
    recalls = []
    with db.session() as s:
        for q in data.questions:
            hits = search.by_lexical(s, q.text, search.Filters(namespaces=[q.corpus]), 10)
            found = set()
            for hit in hits:
                session, index = hit.msg_id.rsplit(":", 1)
                found.add(place[session, int(index)])
            recalls.append(len(q.evidence & found) / len(q.evidence))
    return sum(recalls) / len(recalls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="dialogues", choices=list(DATA))
    args = parser.parse_args()
    data = load(args.data, DATA[args.data])
    with embedded_database("context-lexical"):
        from sqlalchemy import text

        from models import db
        from pipelines import contexts
        from pipelines.appending import NewTurn, write

        corpus_of = {int(n): key for key, members in data.corpora.items() for n in members}
        with db.session() as s:
            for key in data.corpora:
                s.execute(text(RECORDING), {"n": key})
        log(f"{args.data}: appending {len(data.turns)} turns")
        with db.autocommit() as conn:
            for n, t in enumerate(data.turns):
                turn = NewTurn(
                    namespace=corpus_of[n], thread_id=t.session, agent="bench", role=t.role,
                    content=t.content, msg_id=f"{t.session}:{t.index}",
                )  # fmt: skip
                write(conn, turn)
            conn.execute("VACUUM ANALYZE turns")
        with_contexts = recall_at_10(data)
        with db.session() as s:
            s.execute(text("UPDATE turns SET context_lexemes = NULL, context_length = 0"))
        without = recall_at_10(data)
        log(f"{args.data}: lexical recall@10 without contexts {without:.3f}, with {with_contexts:.3f}")
        # Rebuilt from the turns, as the contexts stage does for turns written before contexts.
        threads = sorted({(corpus_of[n], t.session) for n, t in enumerate(data.turns)})
        started, changed = time.perf_counter(), 0
        for batch in contexts.batches(threads):
            with db.session() as s:
                changed += contexts.rebuild(s, batch)
        seconds = time.perf_counter() - started
        log(
            f"{args.data}: {len(threads)} threads rebuilt in {seconds:.1f} s ({changed} turns changed): "
            f"lexical recall@10 {recall_at_10(data):.3f}"
        )


if __name__ == "__main__":
    main()
