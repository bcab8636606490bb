"""The summary of the set and the word-overlap sanity check."""

# ruff: noqa: E501  (the templates are data: long chat lines read better unbroken)
from __future__ import annotations

import datetime as dt
import json
import math
import statistics
from collections import Counter, defaultdict

from words import content, tokens

# summary and the word-overlap sanity check


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def rank_of(scores: list[float], targets: list[int]) -> float:
    """Best (smallest) rank among targets; ties count half (the mid-rank of the tie block)."""
    best = math.inf
    for t in targets:
        s = scores[t]
        higher = sum(1 for v in scores if v > s)
        ties = sum(1 for v in scores if v == s)
        best = min(best, higher + (ties + 1) / 2)
    return best


def bm25_scores(docs: list[list[str]], q: list[str]) -> list[float]:
    n = len(docs)
    avg = sum(len(d) for d in docs) / max(1, n)
    df = Counter(w for d in docs for w in set(d))
    out = []
    for d in docs:
        tf = Counter(d)
        s = 0.0
        for w in set(q):
            if w in tf:
                idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
                s += idf * tf[w] * 2.2 / (tf[w] + 1.2 * (0.25 + 0.75 * len(d) / avg))
        out.append(s)
    return out


def summary(recs: list[dict]) -> dict:
    sessions, turns = {}, {}
    for rec in recs:
        for sid, ses in zip(rec["haystack_session_ids"], rec["haystack_sessions"], strict=True):
            if sid not in sessions:
                sessions[sid] = ses
                for i, t in enumerate(ses):
                    turns[f"{sid}:{i}"] = t["content"]
    lens = [len(t) for t in turns.values()]
    convs = sorted({rec["question_id"][:3] for rec in recs})
    per_sess = [len(s) for s in sessions.values()]
    ses_per_conv = Counter(sid[:3] for sid in sessions)
    months = {}
    for rec in recs:
        d0 = dt.datetime.strptime(rec["haystack_dates"][0][:10], "%Y/%m/%d")
        d1 = dt.datetime.strptime(rec["haystack_dates"][-1][:10], "%Y/%m/%d")
        months[rec["question_id"][:3]] = round((d1 - d0).days / 30.4, 1)
    by_type = Counter(rec["question_type"] for rec in recs)
    ctx_zero = ctx_prev = ctx_n = 0
    low = 0
    low_by: dict[str, list[bool]] = defaultdict(list)
    echo, same_topic = [], []
    for rec in recs:
        q = content(rec["question"])
        ev = [
            (s, i)
            for s, ses in enumerate(rec["haystack_sessions"])
            for i, t in enumerate(ses)
            if t["has_answer"]
        ]
        best = max(len(q & content(rec["haystack_sessions"][s][i]["content"])) for s, i in ev)
        low += best <= 1
        low_by[rec["question_type"]].append(best <= 1)
        if rec["question_type"] != "context-dependent":
            for s, i in ev:
                ses = rec["haystack_sessions"][s]
                if i + 1 < len(ses) and ses[i + 1]["speaker"] != ses[i]["speaker"]:
                    echo.append(bool(content(ses[i]["content"]) & content(ses[i + 1]["content"])))
        if rec["question_type"] == "single-hop":
            others = [
                t["content"]
                for s2, ses in enumerate(rec["haystack_sessions"])
                for i2, t in enumerate(ses)
                if (s2, i2) not in ev
            ]
            same_topic.append(sum(1 for c in others if q & content(c)))
        if rec["question_type"] == "context-dependent":
            ctx_n += 1
            s, i = ev[0]
            ctx_zero += best == 0
            ctx_prev += len(q & content(rec["haystack_sessions"][s][i - 1]["content"])) >= 1
    distinct = len(set(turns.values()))
    return {
        "conversations": len(convs),
        "sessions": len(sessions),
        "turns": len(turns),
        "distinct_turn_texts": distinct,
        "sessions_per_conversation": f"{min(ses_per_conv.values())}-{max(ses_per_conv.values())}",
        "turns_per_session": f"{min(per_sess)}-{max(per_sess)} (median {statistics.median(per_sess)})",
        "months_spanned": f"{min(months.values())}-{max(months.values())}",
        "questions": len(recs),
        "questions_per_type": dict(sorted(by_type.items())),
        "turn_chars_median": statistics.median(lens),
        "turn_chars_p90": pct(lens, 90),
        "turns_under_200_chars": round(sum(x < 200 for x in lens) / len(lens), 3),
        "turns_300_plus_chars": sum(x >= 300 for x in lens),
        "turn_chars_max": max(lens),
        "ctx_evidence_sharing_no_content_word": round(ctx_zero / ctx_n, 3),
        "ctx_previous_turn_sharing_a_content_word": round(ctx_prev / ctx_n, 3),
        "questions_sharing_at_most_one_content_word": round(low / len(recs), 3),
        "... by type": {t: round(sum(v) / len(v), 2) for t, v in sorted(low_by.items())},
        "evidence_next_turn_restating_a_content_word": round(sum(echo) / len(echo), 3),
        "single_hop_other_turns_sharing_a_question_word_median": statistics.median(same_topic),
    }


def sanity(recs: list[dict]) -> dict:
    """Rank every turn by (a) plain content-word overlap with the question, (b) BM25, within the
    question's conversation and over the whole file pooled; hit@10 = an evidence turn in the top 10."""
    conv_turns: dict[str, list[tuple[str, list[str]]]] = defaultdict(list)
    seen = set()
    for rec in recs:
        for sid, ses in zip(rec["haystack_session_ids"], rec["haystack_sessions"], strict=True):
            if sid in seen:
                continue
            seen.add(sid)
            for i, t in enumerate(ses):
                conv_turns[sid[:3]].append((f"{sid}:{i}", tokens(t["content"])))
    pooled = [x for c in sorted(conv_turns) for x in conv_turns[c]]
    res: dict = defaultdict(lambda: defaultdict(list))
    for rec in recs:
        q = tokens(rec["question"])
        qs = set(q)
        ev = {
            f"{sid}:{i}"
            for sid, ses in zip(rec["haystack_session_ids"], rec["haystack_sessions"], strict=True)
            for i, t in enumerate(ses)
            if t["has_answer"]
        }
        for scope, docs in (("conversation", conv_turns[rec["question_id"][:3]]), ("pooled", pooled)):
            ids = [d[0] for d in docs]
            tg = [i for i, m in enumerate(ids) if m in ev]
            ov = [len(qs & set(d[1])) for d in docs]
            bm = bm25_scores([d[1] for d in docs], q)
            res[(scope, "overlap")][rec["question_type"]].append(rank_of(ov, tg) <= 10)
            res[(scope, "bm25")][rec["question_type"]].append(rank_of(bm, tg) <= 10)
            if rec["question_type"] == "multi-hop":
                every = all(rank_of(ov, [i]) <= 10 for i in tg)
                res[(scope, "overlap")]["multi-hop: every evidence turn"].append(every)
                every = all(rank_of(bm, [i]) <= 10 for i in tg)
                res[(scope, "bm25")]["multi-hop: every evidence turn"].append(every)
            if rec["question_type"] == "context-dependent":
                prev = [i - 1 for i in tg]
                res[(scope, "overlap")]["ctx: previous turn"].append(rank_of(ov, prev) <= 10)
                res[(scope, "bm25")]["ctx: previous turn"].append(rank_of(bm, prev) <= 10)
    return {
        f"{scope}/{how}": {t: f"{sum(v) / len(v):.2f} ({sum(v)}/{len(v)})" for t, v in sorted(d.items())}
        for (scope, how), d in sorted(res.items())
    }


def validate(recs: list[dict]) -> None:
    """The invariants the loader and the benchmark rely on."""
    sessions: dict[str, list] = {}
    for rec in recs:
        sids, dates, hs = rec["haystack_session_ids"], rec["haystack_dates"], rec["haystack_sessions"]
        assert len(sids) == len(dates) == len(hs) and 12 <= len(sids) <= 20, rec["question_id"]
        assert dates == sorted(dates) and rec["question_date"] > dates[-1], rec["question_id"]
        marked = set()
        user = hs[0][0]["speaker"]
        for sid, ses in zip(sids, hs, strict=True):
            assert 14 <= len(ses) <= 40, sid
            for a, b in zip(ses, ses[1:], strict=False):
                assert a["speaker"] != b["speaker"], sid
            for t in ses:
                assert (t["role"] == "user") == (t["speaker"] == user), sid
                if t["has_answer"]:
                    marked.add(sid)
            plain = [(t["role"], t["content"], t["speaker"]) for t in ses]
            assert sessions.setdefault(sid, plain) == plain, sid
        assert marked and sorted(marked) == rec["answer_session_ids"], rec["question_id"]
        if rec["question_type"] in ("multi-hop",):
            assert sum(t["has_answer"] for s in hs for t in s) >= 2, rec["question_id"]
    assert len({rec["question_id"] for rec in recs}) == len(recs)


def compact(recs: list[dict]) -> str:
    """The records written once per conversation: its sessions, then its questions with their
    evidence as (session, turn) places (``bench/longmemeval.py`` expands them back into records)."""
    conversations, questions = {}, []
    for rec in recs:
        cid = rec["question_id"].split("_")[0]
        sessions = rec["haystack_sessions"]
        conversations.setdefault(
            cid,
            {
                "session_ids": rec["haystack_session_ids"],
                "dates": rec["haystack_dates"],
                "sessions": [
                    [{k: t[k] for k in ("role", "speaker", "content")} for t in s] for s in sessions
                ],
            },
        )
        evidence = [
            [s, i] for s, turns in enumerate(sessions) for i, t in enumerate(turns) if t["has_answer"]
        ]
        keep = ("question_id", "question_type", "question", "answer", "question_date")
        questions.append({**{k: rec[k] for k in keep}, "conversation": cid, "evidence": evidence})
    lines = [json.dumps(q, ensure_ascii=False, separators=(",", ":")) for q in questions]
    convs = json.dumps(conversations, ensure_ascii=False, indent=0)
    return '{"conversations": ' + convs + ',\n"questions": [\n' + ",\n".join(lines) + "\n]}\n"
