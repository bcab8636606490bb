"""The top of conversation.search's ranking (issue 37 item 3): ranking variants applied on top of
the shipped hybrid, measured offline on both development sets.

    .venv/bin/python bench/ranking_replica.py [--data longmemeval dialogues] [--variants NAME,...]
        [--groups baseline,session,prf,time,speaker,ctxvec,combo] [--no-floor] [--out FILE]

The base is ``context_replica.py``'s replica of the shipped search, imported, not copied: BM25
(k1 1.5, b 1.0) over each turn's PostgreSQL English lexemes plus its context (the previous turn
when it has at most 200 characters, a context word counted 0.9 in tf and length), the int8 MiniLM
cosine leg, pools of 50, RRF k 10, lexical weight 0.6, and the semantic floor 0.30 for a hit only
the vector leg found (``--no-floor`` leaves it out). A variant is a spec of steps applied in this
order to one question's candidates (the union of the two pools):

- ``ctxvec``: a short turn's cosine is the max of its own vector's and the vector of "previous
  short turn + turn" (the semantic pool is taken again with it);
- ``prf``: RM3-like pseudo-relevance feedback on the lexical leg: the top ``docs`` documents of
  the first ranking (lexical or fused) give their highest-weighted terms (tf / length, weighted
  by the document's share of the feedback scores; words in more than 10 % of the corpus left out)
  and the ``terms`` best are added to the query at ``beta`` × their normalised weight; either the
  whole corpus is ranked again (``mode`` full: a second lexical pass) or only the candidates
  already pooled are scored again (``mode`` pool: their lexemes only);
- the fusion (RRF) and the floor, as shipped;
- ``session``: a session's (thread's) score from its candidate turns (``agg``: max, or the sum of
  the top 2 or 3 fused scores; or ``legs``: two session lists, by best cosine and by best BM25),
  either added to its turns' fused score (``form`` add: + lam × S) or as a ranked list of
  sessions whose turns inherit the session's rank, fused beside the turn lists (``form`` rrf:
  + weight / (k + session rank));
- ``time``: a time expression of the question ("yesterday", "last week", "two months ago", "in
  May", "last Saturday", ...) read against the question's date gives a window; candidates whose
  session date falls in it form a list (in fused order) fused at ``weight``;
- ``recency``: a question asking for the current value ("now", "currently", "still", "so far",
  "latest", ...) gets a list of the fused top ``top`` ordered newest session first, fused at
  ``weight``;
- ``speaker``: a question naming exactly one of the conversation's speakers gets a list of that
  speaker's candidates (in fused order) fused at ``weight`` (the dialogue set only: LongMemEval
  has no names).

Every variant is measured on both sets: recall@5/10/25 overall and by question type. Lexemes and
vectors are cached under ``~/.cache/loom-bench`` (context vectors too, by their texts' digest).
Results are in bench/README.md, section ranking_replica.py."""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import pickle
import re
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import context_replica as cr  # noqa: E402
from context_replica import DATA, KS, POOL, RRF_K, WEIGHT, DataSet, Lexical, fuse_scores, ordered  # noqa: E402
from harness import embedded_database, log  # noqa: E402
from longmemeval import load_records  # noqa: E402

from pipelines.hints import ASSISTANT, FIRST_PERSON, windows  # noqa: E402

SHIPPED = next(v for v in cr.VARIANTS if v.name == "prev whole if <= 200 w0.9 lam0.9")
FLOOR = 0.30
SHORT = 200  # a turn's context is its previous turn when that has at most this many characters
COMMON = 0.10  # a word in more than this share of the corpus brings no expansion


# --- what the data says beside the turns -----------------------------------------------------------


@dataclass
class Extra:
    """Per turn: its session's date and its speaker's name; per question: its date; per corpus:
    its speakers' names."""

    turn_date: np.ndarray  # days since 1970 (the session's date)
    speaker: list[str]
    question_date: dict[str, date]
    names: dict[str, set[str]]


def parse_date(text: str) -> date:
    return datetime.strptime(text, "%Y/%m/%d (%a) %H:%M").date()


def extra(data: DataSet, path: Path) -> Extra:
    records = load_records(path)
    session_date: dict[str, date] = {}
    speakers: dict[tuple[str, int], str] = {}
    question_date = {}
    for record in records:
        question_date[record["question_id"]] = parse_date(record["question_date"])
        for sid, when, session in zip(
            record["haystack_session_ids"], record["haystack_dates"], record["haystack_sessions"], strict=True
        ):
            session_date.setdefault(sid, parse_date(when))
            kept = [t for t in session if t["role"] in ("user", "assistant")]
            for index, t in enumerate(kept):
                speakers.setdefault((sid, index), t.get("speaker", t["role"]))
    epoch = date(1970, 1, 1)
    turn_date = np.array([(session_date[t.session] - epoch).days for t in data.turns])
    speaker = [speakers[t.session, t.index] for t in data.turns]
    names: dict[str, set[str]] = {}
    for key, members in data.corpora.items():
        found = {speaker[i] for i in members} - {"user", "assistant"}
        names[key] = found
    return Extra(turn_date, speaker, question_date, names)


# --- the hints: pipelines.hints, as conversation.search reads them ----------------------------------

RECENT = re.compile(
    r"\b(now|currently|current|still|so far|these days|latest|most recent(ly)?|anymore|at the moment|"
    r"nowadays)\b",
    re.IGNORECASE,
)


# --- the replica's legs with their scores ----------------------------------------------------------


class Scored(Lexical):
    """context_replica's BM25 with its scores and documents kept: a weighted query scores
    (``weights``), and each document's term counts (own + w × context) and length stay for
    feedback."""

    def __init__(self, members, own, ctx, w, lam):
        super().__init__(members, own, ctx, w, lam)
        self.local = {int(t): i for i, t in enumerate(members)}
        self.docs = []
        for turn in members:
            terms = Counter({k: float(v) for k, v in own[turn].items()})
            length = float(sum(own[turn].values()))
            if ctx is not None:
                for k, v in ctx[turn].items():
                    terms[k] += w * v
                length += lam * sum(ctx[turn].values())
            self.docs.append((terms, length))
        self.df = {lexeme: len(p[0]) for lexeme, p in self.postings.items()}

    def idf(self, lexeme: str) -> float:
        n = self.df.get(lexeme, 0)
        return math.log(1 + (self.n - n + 0.5) / (n + 0.5))

    def scores(self, weights: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
        scores = np.zeros(self.n)
        hit = np.zeros(self.n, dtype=bool)
        for lexeme, qw in weights.items():
            if lexeme not in self.postings:
                continue
            docs, tf = self.postings[lexeme]
            scores[docs] += qw * self.idf(lexeme) * tf * (cr.K1 + 1) / (tf + self.norm[docs])
            hit[docs] = True
        return scores, hit

    def top(self, scores: np.ndarray, hit: np.ndarray, limit: int) -> list[int]:
        found = np.flatnonzero(hit)
        order = found[np.lexsort((-self.members[found], -scores[found]))][:limit]
        return [int(self.members[i]) for i in order]

    def score_of(self, turn: int, weights: dict[str, float]) -> float:
        i = self.local[turn]
        terms, _ = self.docs[i]
        total = 0.0
        for lexeme, qw in weights.items():
            tf = terms.get(lexeme, 0.0)
            if tf:
                total += qw * self.idf(lexeme) * tf * (cr.K1 + 1) / (tf + self.norm[i])
        return total


def add_list(score: dict[int, float], ranked: list[int], weight: float) -> None:
    for rank, turn in enumerate(ranked, 1):
        score[turn] += weight / (RRF_K + rank)


# --- one question ----------------------------------------------------------------------------------


@dataclass
class Prepared:
    data: DataSet
    extra: Extra
    lex: dict[str, Scored]
    vecs: np.ndarray
    qvecs: np.ndarray
    qlex: list[list[str]]
    ctxvecs: dict[int, np.ndarray]  # short turn -> its "previous + turn" vector


def feedback_weights(
    lex: Scored, query: list[str], docs: list[int], doc_scores: list[float], spec: dict
) -> dict[str, float]:
    """RM3: the feedback documents' term distributions (tf / length), each weighted by the
    document's share of the feedback scores; the ``terms`` best words below the common cut
    (the query's own words may be among them) added to the query at ``beta`` × weight / best."""
    total = sum(doc_scores) or 1.0
    model: Counter = Counter()
    for turn, s in zip(docs, doc_scores, strict=True):
        terms, length = lex.docs[lex.local[turn]]
        for lexeme, tf in terms.items():
            if lex.df.get(lexeme, 0) > COMMON * lex.n or lex.df.get(lexeme, 0) < spec.get("min_df", 2):
                continue
            model[lexeme] += (s / total) * tf / max(length, 1.0)
    if spec.get("idf"):
        model = Counter({k: v * lex.idf(k) for k, v in model.items()})
    best = model.most_common(spec["terms"])
    weights = {lexeme: 1.0 for lexeme in query}
    if best:
        top = best[0][1]
        for lexeme, value in best:
            weights[lexeme] = weights.get(lexeme, 0.0) + spec["beta"] * value / top
    return weights


def rank(p: Prepared, qi: int, spec: dict, floor: float | None, timing: dict | None = None) -> list[int]:
    data, q = p.data, p.data.questions[qi]
    members = data.corpora[q.corpus]
    lex = p.lex[q.corpus]
    qv = p.qvecs[qi]
    sims = p.vecs[members] @ qv
    if "ctxvec" in spec:
        started = time.perf_counter()
        for j, t in enumerate(members.tolist()):
            cv = p.ctxvecs.get(t)
            if cv is not None:
                sims[j] = max(sims[j], float(cv @ qv) - spec["ctxvec"].get("margin", 0.0))
        if timing is not None:
            timing["ctxvec"] = timing.get("ctxvec", 0) + time.perf_counter() - started
    order = np.argsort(-sims, kind="stable")[:POOL]
    semantic = [int(members[i]) for i in order]
    similarity = {int(members[i]): float(sims[i]) for i in order}
    query = {lexeme: 1.0 for lexeme in p.qlex[qi]}
    scores, hit = lex.scores(query)
    lexical = lex.top(scores, hit, POOL)
    if "prf" in spec:
        started = time.perf_counter()
        s = spec["prf"]
        if s.get("source", "lex") == "lex":
            fb = lexical[: s["docs"]]
            fb_scores = [float(scores[lex.local[t]]) for t in fb]
        else:
            sc, fi = fuse_scores([(semantic, 1 - WEIGHT), (lexical, WEIGHT)])
            fb = ordered(sc, fi)[: s["docs"]]
            fb_scores = [sc[t] for t in fb]
        weights = feedback_weights(lex, p.qlex[qi], fb, fb_scores, s)
        if s.get("mode", "full") == "full":
            scores2, hit2 = lex.scores(weights)
            lexical = lex.top(scores2, hit2, POOL)
        else:  # only the pooled candidates scored again
            pool = list(dict.fromkeys(lexical + semantic))
            rescored = {t: lex.score_of(t, weights) for t in pool}
            lexical = sorted((t for t in pool if rescored[t] > 0), key=lambda t: (-rescored[t], -t))[:POOL]
        if timing is not None:
            timing["prf"] = timing.get("prf", 0) + time.perf_counter() - started
    score, first = fuse_scores([(semantic, 1 - WEIGHT), (lexical, WEIGHT)])
    if floor is not None:
        lexical_set = set(lexical)
        for t in list(score):
            if t not in lexical_set and similarity[t] < floor:
                del score[t]
    base = dict(score)
    fused = ordered(score, first)

    if "session" in spec:
        s = spec["session"]
        by_session: dict[str, list[int]] = defaultdict(list)
        for t in fused:
            by_session[data.turns[t].session].append(t)
        if s["agg"] == "legs":
            sem_best: dict[str, float] = {}
            for t in semantic:
                if t in base:
                    sem_best.setdefault(data.turns[t].session, similarity[t])
            lex_best: dict[str, int] = {}
            for t in lexical:
                lex_best.setdefault(data.turns[t].session, 0)
            sem_rank = {sid: r for r, sid in enumerate(sorted(sem_best, key=lambda x: -sem_best[x]), 1)}
            lex_rank = {sid: r for r, sid in enumerate(lex_best, 1)}
            for t in fused:
                sid = data.turns[t].session
                if sid in sem_rank:
                    score[t] += s["weight"] * (1 - WEIGHT) / (RRF_K + sem_rank[sid])
                if sid in lex_rank:
                    score[t] += s["weight"] * WEIGHT / (RRF_K + lex_rank[sid])
        else:
            top = {"max": 1, "top2": 2, "top3": 3}[s["agg"]]
            value = {
                sid: sum(sorted((base[t] for t in ts), reverse=True)[:top]) for sid, ts in by_session.items()
            }
            if s["form"] == "add":
                for t in fused:
                    score[t] += s["lam"] * value[data.turns[t].session]
            else:
                srank = {sid: r for r, sid in enumerate(sorted(value, key=lambda x: -value[x]), 1)}
                for t in fused:
                    score[t] += s["weight"] / (RRF_K + srank[data.turns[t].session])

    if "diverse" in spec:  # the n-th turn of a session down the ranking counts decay^(n-1)
        seen: Counter = Counter()
        for t in ordered(score, first):
            sid = data.turns[t].session
            score[t] *= spec["diverse"]["decay"] ** seen[sid]
            seen[sid] += 1

    if "time" in spec:
        spans = windows(q.text, datetime.combine(p.extra.question_date[q.qid], datetime.min.time()))
        if spans:
            epoch = date(1970, 1, 1)
            days = [((a - epoch).days, (b - epoch).days) for a, b in spans]
            current = ordered(score, first)
            inside = [t for t in current if any(a <= p.extra.turn_date[t] <= b for a, b in days)]
            add_list(score, inside, spec["time"]["weight"])

    if "recency" in spec and RECENT.search(q.text):
        s = spec["recency"]
        current = ordered(score, first)[: s["top"]]
        newest = sorted(current, key=lambda t: (-p.extra.turn_date[t], -t))
        add_list(score, newest, s["weight"])

    if "speaker" in spec:
        named = [
            n for n in p.extra.names.get(q.corpus, ()) if re.search(r"\b" + re.escape(n) + r"\b", q.text)
        ]
        if len(named) == 1:
            current = ordered(score, first)
            theirs = [t for t in current if p.extra.speaker[t] == named[0]]
            add_list(score, theirs, spec["speaker"]["weight"])

    if "role" in spec:
        wanted = None
        if ASSISTANT.search(q.text):
            wanted = "assistant"
        elif FIRST_PERSON.search(q.text):
            wanted = "user"
        if wanted is not None:
            current = ordered(score, first)
            theirs = [t for t in current if data.turns[t].role == wanted]
            add_list(score, theirs, spec["role"]["weight"])

    return ordered(score, first)[: max(KS)]


def evaluate(p: Prepared, spec: dict, floor: float | None) -> dict:
    recall = {k: [] for k in KS}
    by_type: dict[str, dict[int, list[float]]] = defaultdict(lambda: {k: [] for k in KS})
    timing: dict[str, float] = {}
    started = time.perf_counter()
    for qi, q in enumerate(p.data.questions):
        ranked = rank(p, qi, spec, floor, timing)
        for k in KS:
            r = len(q.evidence & set(ranked[:k])) / len(q.evidence)
            recall[k].append(r)
            by_type[q.kind][k].append(r)
    n = len(p.data.questions)
    out = {f"r@{k}": round(float(np.mean(recall[k])), 4) for k in KS}
    out["by_type"] = {
        kind: {f"r@{k}": round(float(np.mean(v[k])), 4) for k in KS} | {"n": len(v[5])}
        for kind, v in sorted(by_type.items())
    }
    out["ms_per_query"] = round(1000 * (time.perf_counter() - started) / n, 2)
    out["step_ms"] = {k: round(1000 * v / n, 3) for k, v in timing.items()}
    out["per_question"] = [round(x, 3) for x in recall[10]]
    out["per_question_5"] = [round(x, 3) for x in recall[5]]
    return out


# --- the variants ----------------------------------------------------------------------------------


def variants() -> dict[str, tuple[str, dict]]:
    """name -> (group, spec)."""
    out: dict[str, tuple[str, dict]] = {"shipped": ("baseline", {})}
    for agg in ("max", "top2", "top3"):
        for lam in (0.25, 0.5, 1.0):
            out[f"session add {agg} lam{lam}"] = (
                "session",
                {"session": {"agg": agg, "form": "add", "lam": lam}},
            )
        for w in (0.2, 0.4, 0.6):
            out[f"session rrf {agg} w{w}"] = (
                "session",
                {"session": {"agg": agg, "form": "rrf", "weight": w}},
            )
    for w in (0.2, 0.4, 0.6):
        out[f"session legs w{w}"] = ("session", {"session": {"agg": "legs", "weight": w}})
    for decay in (0.95, 0.9, 0.8):
        out[f"diverse decay{decay}"] = ("session", {"diverse": {"decay": decay}})
    for source in ("lex", "fused"):
        for docs in (3, 5, 10):
            for terms in (10, 20):
                for beta in (0.3, 0.5):
                    out[f"prf {source} d{docs} t{terms} b{beta}"] = (
                        "prf",
                        {
                            "prf": {
                                "source": source,
                                "docs": docs,
                                "terms": terms,
                                "beta": beta,
                                "mode": "full",
                            }
                        },
                    )
    for w in (0.2, 0.4, 0.6, 1.0):
        out[f"time w{w}"] = ("time", {"time": {"weight": w}})
    for top in (10, 25):
        for w in (0.1, 0.2, 0.4):
            out[f"recency top{top} w{w}"] = ("time", {"recency": {"top": top, "weight": w}})
    for w in (0.2, 0.4, 0.6, 1.0):
        out[f"speaker w{w}"] = ("speaker", {"speaker": {"weight": w}})
    for w in (0.2, 0.4, 0.6):
        out[f"role w{w}"] = ("speaker", {"role": {"weight": w}})
    for margin in (0.0, 0.02, 0.05):
        out[f"ctxvec margin{margin}"] = ("ctxvec", {"ctxvec": {"margin": margin}})
    return out


# --- preparing a set -------------------------------------------------------------------------------


def cached(name: str, key: str, make):
    path = cr.CACHE / f"rank-{name}-{hashlib.sha256(key.encode()).hexdigest()[:16]}.pkl"
    if path.exists():
        return pickle.loads(path.read_bytes())
    value = make()
    cr.CACHE.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(value))
    return value


def context_vector_texts(data: DataSet) -> dict[int, str]:
    """Each short turn (at most 200 characters) whose previous turn is short too: "previous +
    turn", the text its context vector embeds."""
    by_place = {(t.session, t.index): t for t in data.turns}
    out = {}
    for i, t in enumerate(data.turns):
        before = by_place.get((t.session, t.index - 1))
        if len(t.content) <= SHORT and before is not None and len(before.content) <= SHORT:
            out[i] = before.content + "\n" + t.content
    return out


def prepare(name: str, with_ctxvec: bool, url_box: dict) -> Prepared:
    data = cr.load(name, DATA[name])
    log(f"{name}: {len(data.turns)} turns, {len(data.questions)} questions")
    ctx_texts = cr.context_texts(data, SHIPPED)
    key = "\x00".join(t.content for t in data.turns) + "\x01" + "\x00".join(q.text for q in data.questions)

    def tokenize():
        if "url" not in url_box:
            url_box["cm"] = embedded_database("ranking-replica")
            url_box["url"] = url_box["cm"].__enter__()
        url = url_box["url"]
        own = cr.lexemes(url, [t.content for t in data.turns])
        ctx = cr.lexemes(url, ctx_texts)
        qlex = [list(dict.fromkeys(c)) for c in cr.lexemes(url, [q.text for q in data.questions])]
        return own, ctx, qlex

    own, ctx, qlex = cached("lexemes", key + "\x02".join(ctx_texts), tokenize)
    vecs = cr.vectors([t.content for t in data.turns])
    qvecs = cr.vectors([q.text for q in data.questions])
    ctxvecs: dict[int, np.ndarray] = {}
    if with_ctxvec:
        texts = context_vector_texts(data)
        log(f"{name}: {len(texts)} context vectors")
        array = cr.vectors(list(texts.values()))
        ctxvecs = dict(zip(texts, array, strict=True))
    lex = {k: Scored(m, own, ctx, SHIPPED.w, SHIPPED.lam) for k, m in data.corpora.items()}
    return Prepared(data, extra(data, DATA[name]), lex, vecs, qvecs, qlex, ctxvecs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", nargs="*", default=list(DATA))
    parser.add_argument("--variants", default="", help="comma-separated names (default: all of --groups)")
    parser.add_argument(
        "--groups", default="baseline,session,prf,time,speaker", help="comma-separated groups"
    )
    parser.add_argument("--no-floor", action="store_true", help="leave out the semantic floor of 0.30")
    parser.add_argument("--combos", default="", help="a JSON file of {name: spec} to measure too")
    parser.add_argument("--out", default="", help="write the results as JSON here")
    args = parser.parse_args()
    table = variants()
    if args.combos:
        table.update({k: ("combo", v) for k, v in json.loads(Path(args.combos).read_text()).items()})
    groups = set(args.groups.split(","))
    names = args.variants.split(",") if args.variants else [k for k, (g, _) in table.items() if g in groups]
    need_ctxvec = any("ctxvec" in table[n][1] for n in names)
    floor = None if args.no_floor else FLOOR
    url_box: dict = {}
    results: dict[str, dict] = defaultdict(dict)
    try:
        prepared = [prepare(name, need_ctxvec, url_box) for name in args.data]
    finally:
        if "cm" in url_box:
            url_box["cm"].__exit__(None, None, None)
    for p in prepared:
        for n in names:
            r = evaluate(p, table[n][1], floor)
            results[n][p.data.name] = r
            weak = ", ".join(f"{k} {v['r@10']:.3f}" for k, v in r["by_type"].items())
            figures = f"r@5 {r['r@5']:.3f} r@10 {r['r@10']:.3f} r@25 {r['r@25']:.3f}"
            log(f"{p.data.name:11s} {n:36s} {figures} | {weak}")
    if args.out:
        Path(args.out).write_text(json.dumps({"specs": {n: table[n][1] for n in names}, "results": results}))


if __name__ == "__main__":
    main()
