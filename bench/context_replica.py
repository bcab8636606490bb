"""What a turn's lexical document should hold beside the turn: an offline replica of
conversation.search's hybrid, by exact scans, to try variants on both development sets before one
is built (issue 23; the results are in bench/README.md).

    .venv/bin/python bench/context_replica.py [--data FILE ...] [--variants NAME,...] [--by-type]
        [--k1 1.5] [--b 1.0]

The replica is the shipped search but exact: BM25 (k1 1.5, b 1.0) over PostgreSQL's own English
tsvectors of each text (an embedded PostgreSQL tokenizes, as ``turns.lexemes`` does), the int8
MiniLM vectors Loom stores (cosine, no floor: the hybrid's semantic leg), pools of 50, RRF k 10,
lexical weight 0.6, one hit per turn. A variant says what a turn's lexical document holds beside
its own words (its context: the previous and next turns of its thread, whole or cut to a budget),
how much a context word counts (``w``: its tf weight) and how much of the context's length counts
in BM25's document length (``lam``). ``leg`` variants keep the turn's own document as it is and
rank turns by (own + context) in a second lexical list, fused beside the first.

The corpus is what one search reads: the LongMemEval file is one namespace (every session); the
dialogue set (bench/dialogues/) is one namespace a conversation (a question's haystack). Vectors
are cached under ``~/.cache/loom-bench`` by the texts' digest."""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness import embedded_database, log  # noqa: E402
from longmemeval import load_records  # noqa: E402

DATA = {
    "longmemeval": Path("/work/shared/data/longmemeval_oracle.json"),
    "dialogues": Path(__file__).resolve().parent / "dialogues" / "short_turns.json",
}
CACHE = Path.home() / ".cache" / "loom-bench"
K1, B = 1.5, 1.0
POOL, RRF_K, WEIGHT = 50, 10, 0.6
KS = (5, 10, 25)
EMBED_CHARS = 2048


@dataclass
class Turn:
    session: str
    index: int  # among the session's user and assistant turns
    role: str
    content: str


@dataclass
class Question:
    qid: str
    kind: str
    text: str
    evidence: set[int]  # turn numbers
    corpus: str  # key of the corpus it searches


@dataclass
class DataSet:
    name: str
    turns: list[Turn]
    questions: list[Question]
    corpora: dict[str, np.ndarray] = field(default_factory=dict)  # key -> turn numbers


def load(name: str, path: Path) -> DataSet:
    """Every session once (a thread), its user and assistant turns; each question with its
    evidence turns. The dialogue set's corpus is a question's own conversation."""
    records = load_records(path)
    turns: list[Turn] = []
    number: dict[tuple[str, int], int] = {}
    per_conversation = name != "longmemeval"
    corpora: dict[str, list[int]] = defaultdict(list)
    questions = []
    for record in records:
        key = record["question_id"].split("_")[0] if per_conversation else "all"
        evidence = set()
        for session_id, session in zip(
            record["haystack_session_ids"], record["haystack_sessions"], strict=True
        ):
            kept = [t for t in session if t["role"] in ("user", "assistant")]
            for index, t in enumerate(kept):
                if (session_id, index) not in number:
                    number[session_id, index] = len(turns)
                    turns.append(Turn(session_id, index, t["role"], t["content"]))
                    corpora[key].append(number[session_id, index])
                if t.get("has_answer"):
                    evidence.add(number[session_id, index])
        if evidence:
            questions.append(
                Question(record["question_id"], record["question_type"], record["question"], evidence, key)
            )
    return DataSet(name, turns, questions, {k: np.array(sorted(set(v))) for k, v in corpora.items()})


# --- tokens and vectors ----------------------------------------------------------------------------


def lexemes(url: str, texts: list[str]) -> list[Counter]:
    """Each text's lexemes with their counts, as ``to_tsvector('english', …)`` makes them."""
    import psycopg

    found: list[Counter] = [Counter() for _ in texts]
    with psycopg.connect(url.replace("+psycopg", "")) as conn:
        for start in range(0, len(texts), 2000):
            rows = conn.execute(
                "SELECT i, lexeme, coalesce(array_length(positions, 1), 1) "
                "FROM unnest(%s::text[]) WITH ORDINALITY AS x(t, i), "
                "unnest(to_tsvector('english', left(t, 200000)))",
                [texts[start : start + 2000]],
            )
            for i, lexeme, tf in rows:
                found[start + i - 1][lexeme] = tf
    return found


def vectors(texts: list[str]) -> np.ndarray:
    digest = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:16]
    path = CACHE / f"minilm-int8-{digest}.npy"
    if path.exists():
        return np.load(path)
    from providers.embedders import get_embedder

    embedder = get_embedder()
    log(f"embedding {len(texts)} texts")
    out = []
    for start in range(0, len(texts), 256):
        out.extend(embedder.embed([t[:EMBED_CHARS] for t in texts[start : start + 256]]))
    array = np.asarray(out, dtype=np.float32)
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(path, array)
    return array


# --- what a turn's context holds -------------------------------------------------------------------


def tail(text: str, chars: int) -> str:
    """The last ``chars`` characters, from a word's start."""
    if len(text) <= chars:
        return text
    cut = text[-chars:]
    return cut.split(" ", 1)[1] if " " in cut else cut


def head(text: str, chars: int) -> str:
    if len(text) <= chars:
        return text
    cut = text[:chars]
    return cut.rsplit(" ", 1)[0] if " " in cut else cut


@dataclass(frozen=True)
class Variant:
    name: str
    prev: str = "none"  # none | whole | budget
    next: str = "none"
    alpha: float = 1.0  # a budget: alpha × the turn's own characters ...
    floor: int = 0  # ... at least this many ...
    cap: int = 10**9  # ... at most this many
    w: float = 1.0  # a context word's tf weight
    lam: float = 1.0  # the share of the context's length in the document length
    leg: bool = False  # the context as a lexical list of its own, fused beside the turn's
    leg_weight: float = 0.5  # a leg variant's share of the lexical weight given to the context list
    short: int = 10**9  # only a turn of at most this many characters gets a context
    near_max: int = 10**9  # only a neighbour of at most this many characters is context


def context_texts(data: DataSet, v: Variant) -> list[str]:
    by_place = {(t.session, t.index): t for t in data.turns}
    texts = []
    for t in data.turns:
        own = len(t.content)
        if own > v.short:
            texts.append("")
            continue
        budget = int(min(v.cap, max(v.floor, v.alpha * own)))
        parts = []
        before = by_place.get((t.session, t.index - 1))
        after = by_place.get((t.session, t.index + 1))
        before = before if before and len(before.content) <= v.near_max else None
        after = after if after and len(after.content) <= v.near_max else None
        if before and v.prev != "none":
            parts.append(before.content if v.prev == "whole" else tail(before.content, budget))
        if after and v.next != "none":
            parts.append(after.content if v.next == "whole" else head(after.content, budget))
        texts.append("\n".join(parts))
    return texts


# --- the replica -----------------------------------------------------------------------------------


class Lexical:
    """BM25 over one corpus's documents: tf = own + w × context, length = own + lam × context."""

    def __init__(
        self, members: np.ndarray, own: list[Counter], ctx: list[Counter] | None, w: float, lam: float
    ):
        self.members = members
        postings: dict[str, dict[int, float]] = defaultdict(dict)
        lengths = np.zeros(len(members))
        for local, turn in enumerate(members):
            for lexeme, tf in own[turn].items():
                postings[lexeme][local] = tf
            lengths[local] = sum(own[turn].values())
            if ctx is not None:
                for lexeme, tf in ctx[turn].items():
                    postings[lexeme][local] = postings[lexeme].get(local, 0.0) + w * tf
                lengths[local] += lam * sum(ctx[turn].values())
        self.postings = {
            lexeme: (np.fromiter(d.keys(), int, len(d)), np.fromiter(d.values(), float, len(d)))
            for lexeme, d in postings.items()
        }
        self.norm = K1 * (1 - B + B * lengths / max(lengths.mean(), 1.0))
        self.n = len(members)

    def ranked(self, query: list[str], limit: int) -> list[int]:
        scores = np.zeros(self.n)
        hit = np.zeros(self.n, dtype=bool)
        for lexeme in query:
            if lexeme not in self.postings:
                continue
            docs, tf = self.postings[lexeme]
            idf = math.log(1 + (self.n - len(docs) + 0.5) / (len(docs) + 0.5))
            scores[docs] += idf * tf * (K1 + 1) / (tf + self.norm[docs])
            hit[docs] = True
        found = np.flatnonzero(hit)
        order = found[np.lexsort((-self.members[found], -scores[found]))][:limit]
        return [int(self.members[i]) for i in order]


def fuse_scores(lists: list[tuple[list[int], float]]) -> tuple[dict[int, float], dict[int, int]]:
    """Each turn's RRF score over the weighted lists, and its tie-break (its rank in the first list
    holding it)."""
    score: dict[int, float] = defaultdict(float)
    first: dict[int, int] = {}
    for rank_list, weight in lists:
        for rank, turn in enumerate(rank_list, 1):
            score[turn] += weight / (RRF_K + rank)
            first.setdefault(turn, rank)
    return score, first


def ordered(score: dict[int, float], first: dict[int, int]) -> list[int]:
    return sorted(score, key=lambda t: (-score[t], first[t]))


def fuse(lists: list[tuple[list[int], float]], limit: int) -> list[int]:
    return ordered(*fuse_scores(lists))[:limit]


def evaluate(data: DataSet, v: Variant, own, ctx, vecs, qvecs, qlex, floor: float | None) -> dict:
    legs: dict[str, tuple[Lexical, Lexical | None]] = {}
    for key, members in data.corpora.items():
        if ctx is None:
            legs[key] = (Lexical(members, own, None, 0, 0), None)
        elif v.leg:
            legs[key] = (Lexical(members, own, None, 0, 0), Lexical(members, own, ctx, v.w, v.lam))
        else:
            legs[key] = (Lexical(members, own, ctx, v.w, v.lam), None)
    recall = {k: [] for k in KS}
    lexical_recall = []
    by_type: dict[str, list[float]] = defaultdict(list)
    for q, qv, ql in zip(data.questions, qvecs, qlex, strict=True):
        members = data.corpora[q.corpus]
        sims = vecs[members] @ qv
        semantic = [int(members[i]) for i in np.argsort(-sims, kind="stable")[:POOL]]
        first, second = legs[q.corpus]
        lexical = first.ranked(ql, POOL)
        if second is None:
            lists = [(semantic, 1 - WEIGHT), (lexical, WEIGHT)]
        else:
            share = v.leg_weight
            lists = [
                (semantic, 1 - WEIGHT),
                (lexical, WEIGHT * (1 - share)),
                (second.ranked(ql, POOL), WEIGHT * share),
            ]
        fused = fuse(lists, len(members))
        if floor is not None:  # a hit only the vector leg found must pass the semantic floor
            similarity = dict(zip(members.tolist(), sims.tolist(), strict=True))
            fused = [t for t in fused if t in lexical or similarity[t] >= floor]
        fused = fused[: max(KS)]
        for k in KS:
            recall[k].append(len(q.evidence & set(fused[:k])) / len(q.evidence))
        lexical_recall.append(len(q.evidence & set(lexical[:10])) / len(q.evidence))
        by_type[q.kind].append(len(q.evidence & set(fused[:10])) / len(q.evidence))
    out = {f"r@{k}": round(float(np.mean(recall[k])), 4) for k in KS}
    out["lexical_r@10"] = round(float(np.mean(lexical_recall)), 4)
    out["by_type_r@10"] = {kind: round(float(np.mean(r)), 4) for kind, r in sorted(by_type.items())}
    return out


VARIANTS = [
    Variant("turn alone (shipped)"),
    Variant("prev whole", prev="whole"),
    Variant("prev+next whole", prev="whole", next="whole"),
    Variant("prev whole w0.5 len own", prev="whole", w=0.5, lam=0),
    Variant("prev budget 1x", prev="budget", alpha=1.0),
    Variant("prev budget 1x floor 100", prev="budget", alpha=1.0, floor=100),
    Variant("prev budget 2x floor 100", prev="budget", alpha=2.0, floor=100),
    Variant("prev+next budget 1x floor 100", prev="budget", next="budget", alpha=1.0, floor=100),
    Variant("prev+next budget 1x floor 100 w0.5", prev="budget", next="budget", alpha=1.0, floor=100, w=0.5),
    Variant("prev+next budget 1x floor 100 lam0", prev="budget", next="budget", alpha=1.0, floor=100, lam=0),
    Variant("prev budget 1x floor 100 cap 300", prev="budget", alpha=1.0, floor=100, cap=300),
    Variant("prev+next budget 1x floor 100 w0.5 lam0", prev="budget", next="budget", floor=100, w=0.5, lam=0),
    Variant("prev+next budget 0.5x floor 60 lam0", prev="budget", next="budget", alpha=0.5, floor=60, lam=0),
    Variant("short 300: prev whole lam0", prev="whole", short=300, lam=0),
    Variant("short 300: prev budget 2x floor 100 lam0", prev="budget", alpha=2, floor=100, short=300, lam=0),
    Variant(
        "short 300: prev+next budget 1x floor 100 lam0",
        prev="budget",
        next="budget",
        floor=100,
        short=300,
        lam=0,
    ),
    Variant("short 200: prev+next whole w0.5 lam0", prev="whole", next="whole", short=200, w=0.5, lam=0),
    Variant("short 200: prev whole", prev="whole", short=200),
    Variant("leg: prev whole", prev="whole", leg=True),
    Variant("leg: prev+next whole", prev="whole", next="whole", leg=True),
    Variant(
        "leg: prev+next budget 1x floor 100", prev="budget", next="budget", alpha=1.0, floor=100, leg=True
    ),
]

# The weights of a budgeted context, tried on both sets.
VARIANTS += [
    Variant(f"{sides} budget 1x floor 100 w{w} lam{lam}", prev="budget", next=nxt, floor=100, w=w, lam=lam)
    for sides, nxt in (("prev", "none"), ("prev+next", "budget"))
    for w in (0.5, 0.75, 1.0)
    for lam in (0.0, 0.25, 0.5)
]

# Neighbours taken whole, but only short ones (a long answer is not a turn's context).
VARIANTS += [
    Variant(f"{sides} whole if <= {near} w{w} lam{lam}", prev="whole", next=nxt, near_max=near, w=w, lam=lam)
    for sides, nxt in (("prev", "none"), ("prev+next", "whole"))
    for near in (200, 400)
    for w, lam in ((1.0, 1.0), (0.5, 0.0), (1.0, 0.0), (0.5, 0.5))
]

# Context words a little lighter than the turn's own, so a turn searched by its own text outranks
# the next turn, whose context holds that text too.
VARIANTS += [
    Variant(f"prev whole if <= 200 w{w} lam{lam}", prev="whole", near_max=200, w=w, lam=lam)
    for w, lam in ((0.9, 1.0), (0.8, 1.0), (0.9, 0.9), (0.8, 0.8))
]


def main() -> None:
    global K1, B
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data", nargs="*", default=list(DATA), help="data sets by name (longmemeval, dialogues)"
    )
    parser.add_argument("--variants", default="", help="comma-separated names (default: all)")
    parser.add_argument("--by-type", action="store_true")
    parser.add_argument("--floor", type=float, help="keep a vector-only hit at this cosine or above")
    parser.add_argument("--k1", type=float, default=K1, help="BM25's k1")
    parser.add_argument("--b", type=float, default=B, help="BM25's b")
    args = parser.parse_args()
    K1, B = args.k1, args.b
    chosen = [v for v in VARIANTS if not args.variants or v.name in args.variants.split(",")]
    sets = [load(name, DATA[name]) for name in args.data]
    results: dict[str, dict] = defaultdict(dict)
    with embedded_database("context-replica") as url:
        for data in sets:
            log(f"{data.name}: {len(data.turns)} turns, {len(data.questions)} questions")
            own = lexemes(url, [t.content for t in data.turns])
            qlex = [list(dict.fromkeys(c)) for c in lexemes(url, [q.text for q in data.questions])]
            vecs = vectors([t.content for t in data.turns])
            qvecs = vectors([q.text for q in data.questions])
            for v in chosen:
                ctx = None if v.prev == v.next == "none" else lexemes(url, context_texts(data, v))
                results[v.name][data.name] = evaluate(data, v, own, ctx, vecs, qvecs, qlex, args.floor)
                r = results[v.name][data.name]
                log(
                    f"  {v.name:45s} r@5 {r['r@5']:.3f} r@10 {r['r@10']:.3f} r@25 {r['r@25']:.3f} "
                    f"lexical r@10 {r['lexical_r@10']:.3f}"
                )
                if args.by_type:
                    log("    " + ", ".join(f"{k} {x:.3f}" for k, x in r["by_type_r@10"].items()))
    print(json.dumps(results))


if __name__ == "__main__":
    main()
