"""Planning a conversation, and the records written from the plans."""

# ruff: noqa: E501  (the templates are data: long chat lines read better unbroken)
from __future__ import annotations

import datetime as dt
import random

from asked import CTX, ctx_replies
from base import N_CONV, PARA_MULTI, PARA_OTHER, PARA_SINGLE, SEED
from chitchat import (
    ACKS,
    CLOSE_1,
    CLOSE_2,
    CLOSE_3,
    CLOSE_TAILS,
    FILLERS,
    FRIENDS,
    GREET_TAILS,
    GREET_TAILS_TOD,
    GREETINGS,
    GREETINGS_LONG,
    PET_MENTION,
    SIB_CITY,
    SIB_VISIT,
    TOPIC_FILLERS,
)
from episodes import Ep, Question, Turn, ctx_ep, filler_ep, in_season, other, pad, rant_ep, setup_ep, stmt_ep
from people import CITIES, MAIN_F, MAIN_M, MONTHS, SIDE_F, SIDE_M, WD, Person, fill, stamp, when_expr
from stated import KIND, KINDS, RACES
from updates import UPDATES
from words import content

# planning a conversation


def overlap(a: str, b: str) -> int:
    return len(content(a) & content(b))


def says(k, field="say") -> list[tuple[str, list]]:
    """A kind's statements as (text, questions valid only for that text)."""
    return [(x, []) if isinstance(x, str) else x for x in k.get(field, [])]


def say_text(r, k, field="say") -> str:
    return r.choice(says(k, field))[0]


def best_q(r, text: str, qs: list, sl: dict, lexical: bool):
    """A question template for an evidence text: sharing >= 2 content words when lexical, at most
    one otherwise (falls back to the closest)."""
    scored = [
        (overlap(fill(text, sl), fill(q if isinstance(q, str) else q[0], sl)), i) for i, q in enumerate(qs)
    ]
    good = [i for ov, i in scored if (ov >= 2) == lexical and (ov <= 1) != lexical]
    if not good:
        key = max if lexical else min
        target = key(ov for ov, _ in scored)
        good = [i for ov, i in scored if ov == target]
    return qs[r.choice(good)]


class Conv:
    def __init__(self, ci: int, r: random.Random, A: Person, B: Person):
        self.ci, self.r, self.A, self.B = ci, r, A, B
        self.pair = (A, B)
        n = r.randint(12, 20)
        self.n = n
        start = dt.datetime(2022, 1, 3) + dt.timedelta(days=r.randint(0, 520))
        span = r.randint(185, 350)
        w = [r.uniform(0.35, 1.65) for _ in range(n - 1)]
        days = [0]
        for wi in w:
            days.append(days[-1] + max(2, round(span * wi / sum(w))))
        self.times = []
        for d in days:
            h = r.choice([8, 9, 12, 13, 17, 18, 19, 20, 20, 21, 21, 22, 22, 23])
            self.times.append(start + dt.timedelta(days=d, hours=h, minutes=r.randint(0, 59)))
        self.sess: list[list[Ep]] = [[] for _ in range(n)]
        self.qs: list[Question] = []
        self.topics: list[str] = []

    # -- helpers
    def other(self, p):
        return other(p, self.pair)

    def place(self, ep: Ep, lo: int = 0, hi: int | None = None, avoid=(), months=None) -> int:
        hi = self.n - 1 if hi is None else hi
        cand = [s for s in range(lo, hi + 1) if s not in avoid] or list(range(lo, hi + 1))
        if months:
            cand = [s for s in cand if self.times[s].month in months] or cand
        sample = self.r.sample(cand, min(3, len(cand)))
        s = min(sample, key=lambda i: (len([e for e in self.sess[i] if e.required]), i))
        self.sess[s].append(ep)
        return s

    def free_kinds(self, o, pool, need=None):
        out = []
        for k in pool:
            if k["key"] in o.used or not k.get("req", lambda p: True)(o):
                continue
            if need and not k.get(need):
                continue
            out.append(k)
        return out

    def sl(self, k, o):
        return dict(o.slots(), **k["slots"](self.r, o))

    def distract(self, k, o, p=0.55, avoid=()):
        """The other person states the same kind of fact (other values), elsewhere."""
        x = self.other(o)
        if self.r.random() < p and k in self.free_kinds(x, KINDS):
            x.used.add(k["key"])
            sl = self.sl(k, x)
            self.place(
                stmt_ep(
                    self.r, x, o, sl, say_text(self.r, k), k["mood"], k["echo"], k["follow"], required=False
                ),
                avoid=avoid,
                months=k.get("months"),
            )

    # -- question builders
    def single(self, o):
        r, x = self.r, self.other(o)
        k = r.choice(self.free_kinds(o, KINDS))
        o.used.add(k["key"])
        sl = self.sl(k, o)
        want_para = r.random() < PARA_SINGLE
        pairs = [(s, q) for s, extra in says(k) for q in k["q"] + extra]
        good = [(s, q) for s, q in pairs if (overlap(fill(s, sl), fill(q[0], sl)) <= 1) == want_para]
        s, (qt, at) = r.choice(good or pairs)
        ep = stmt_ep(r, o, x, sl, s, k["mood"], k["echo"], k["follow"])
        si = self.place(ep, months=k.get("months"))
        self.qs.append(Question("single-hop", fill(qt, sl), fill(at, sl), [ep]))
        self.topics.append(k["topic"])
        self.distract(k, o, avoid=(si,))

    def context(self, o):
        r, x = self.r, self.other(o)
        k = r.choice(self.free_kinds(o, CTX))
        o.used.add(k["key"])
        sl = self.sl(k, o)
        rt, at = r.choice(ctx_replies(k, sl))
        prompt = r.choice(k["prompts"])
        qt = r.choice(k["q"])
        ep = ctx_ep(r, k, o, x, sl, prompt, rt, qtext=fill(qt, sl))
        has_setup = bool(k.get("setup")) and r.random() < 0.6
        si = self.place(ep, lo=1 if has_setup else 0)
        if has_setup:
            self.sess[max(0, si - r.choice([1, 1, 2]))].append(
                setup_ep(r, o, x, sl, r.choice(k["setup"]), k["mood"])
            )
        self.qs.append(Question("context-dependent", fill(qt, sl), fill(at, sl), [ep]))
        self.topics.append(k["topic"])
        if r.random() < 0.3 and k in self.free_kinds(x, CTX):
            x.used.add(k["key"])
            xs = self.sl(k, x)
            self.place(
                ctx_ep(
                    r, k, x, o, xs, r.choice(k["prompts"]), r.choice(ctx_replies(k, xs))[0], required=False
                ),
                avoid=(si,),
            )

    def temporal(self, o):
        r, x = self.r, self.other(o)
        k = r.choice(self.free_kinds(o, KINDS, need="say_t"))
        o.used.add(k["key"])
        sl = self.sl(k, o)
        ep_holder: list[Ep] = []
        # the session must be known before the wording: plan the slot first
        si = self.place(Ep(lambda f: ([], []), True))
        self.sess[si].pop()
        expr, ans = when_expr(r, self.times[si], k["tense"])
        sl["when"] = expr
        text = say_text(r, k, "say_t")
        ep = stmt_ep(r, o, x, sl, text, k["mood"], k["echo"], k["follow"])
        self.sess[si].append(ep)
        ep_holder.append(ep)
        qt = best_q(r, text, k["tq"], sl, lexical=r.random() >= PARA_OTHER)
        self.qs.append(Question("temporal", fill(qt, sl), ans, [ep]))
        self.topics.append(k["topic"])
        self.distract(k, o, p=0.4, avoid=(si,))

    def update(self, o):
        r, x = self.r, self.other(o)
        cands = self.free_kinds(o, UPDATES)
        k = r.choice(cands)
        o.used.add(k["key"])
        sl = self.sl(k, o)
        i = r.randint(0, self.n - 4)
        j = r.randint(i + 2, self.n - 1)
        old = stmt_ep(
            r, o, x, sl, r.choice(k["old"]), "neu", k["echo_old"], [], long_p=0, react_tail=False, tail=False
        )
        ntext = r.choice(k["new"])
        new = stmt_ep(r, o, x, sl, ntext, "pos", k["echo_new"], [], long_p=0, react_tail=False, tail=False)
        self.sess[i].append(old)
        self.sess[j].append(new)
        qt = best_q(r, ntext, k["q"], sl, lexical=r.random() >= PARA_OTHER)
        self.qs.append(Question("knowledge-update", fill(qt, sl), fill(k["a"], sl), [new]))
        self.topics.append(k["topic"])
        if r.random() < 0.3 and k in self.free_kinds(x, UPDATES):
            x.used.add(k["key"])
            xs = self.sl(k, x)
            self.place(
                stmt_ep(
                    r,
                    x,
                    o,
                    xs,
                    r.choice(k["old"]),
                    "neu",
                    k["echo_old"],
                    [],
                    required=False,
                    long_p=0,
                    react_tail=False,
                    tail=False,
                )
            )

    def multi(self, o):
        r, x = self.r, self.other(o)
        pats = []
        if o.pet and (self.free_kinds(o, [KIND["dog"]]) or self.free_kinds(o, [KIND["kitten"]])):
            pats.append("pets")
        for key in ("trip", "concert", "book"):
            if self.free_kinds(o, [KIND[key]]):
                pats.append(key)
        for key in ("sport", "instrument", "language", "race"):
            if self.free_kinds(o, [KIND[key]]) and self.free_kinds(x, [KIND[key]]):
                pats.append("both-" + key)
        if "sibvisit" not in o.used:
            pats.append("bridge")
        pat = r.choice(pats)
        two = r.sample(range(self.n), 2)
        if pat == "pets":
            ks = self.free_kinds(o, [KIND["dog"], KIND["kitten"]])
            k = r.choice(ks)
            o.used.add(k["key"])
            sl = self.sl(k, o)
            e1 = stmt_ep(r, o, x, sl, r.choice(PET_MENTION[o.pet[0]]), "pos", [], [], long_p=0)
            e2 = stmt_ep(r, o, x, sl, say_text(r, k), "pos", k["echo"], k["follow"])
            new = (
                f"a {sl['breed']} named {sl['dog']}"
                if k["key"] == "dog"
                else f"a {sl['cat']} kitten named {sl['catname']}"
            )
            q = Question(
                "multi-hop",
                fill(r.choice(["What pets does {N} have?", "Which animals live with {N}?"]), sl),
                f"a {o.pet[0]} named {o.pet[1]} and {new}",
                [e1, e2],
            )
            self.topics.append("pets")
        elif pat in ("trip", "concert", "book"):
            k = KIND[pat]
            o.used.add(pat)
            sl1 = self.sl(k, o)
            sl2 = self.sl(k, o)
            keyname = {"trip": "place", "concert": "band", "book": "book"}[pat]
            while sl2[keyname] == sl1[keyname]:
                sl2 = self.sl(k, o)
            s1, s2 = [t for t, _ in r.sample(says(k), 2)]
            e1 = stmt_ep(r, o, x, sl1, s1, "pos", k["echo"], k["follow"])
            e2 = stmt_ep(r, o, x, sl2, s2, "pos", k["echo"], k["follow"])
            qt = {
                "trip": [
                    "Which places has {N} traveled to?",
                    "What trips has {N} come back from?",
                    "Name the destinations {N} visited.",
                ],
                "concert": [
                    "Which artists has {N} seen live?",
                    "Which bands has {N} seen live in concert?",
                    "What concerts did {N} attend?",
                ],
                "book": ["Which books has {N} been reading?", "What novels has {N} read?"],
            }[pat]
            q = Question(
                "multi-hop",
                fill(best_q(r, s1, qt, sl1, r.random() >= PARA_MULTI), sl1),
                f"{sl1[keyname]} and {sl2[keyname]}",
                [e1, e2],
            )
            self.topics.append(k["topic"])
        elif pat.startswith("both-"):
            key = pat[5:]
            k = KIND[key]
            o.used.add(key)
            x.used.add(key)
            slo = self.sl(k, o)
            slx = self.sl(k, x)
            shared = {"sport": "sport", "instrument": "inst", "language": "lang", "race": "race"}[key]
            slx[shared] = slo[shared]
            if key == "race":
                _, tf = next(rc for rc in RACES if rc[0] == slo["race"])
                slx["rtime"] = tf(r)
                while slx["rtime"] == slo["rtime"]:
                    slx["rtime"] = tf(r)
            e1_text, e2_text = [t for t, _ in r.sample(says(k), 2)]
            e1 = stmt_ep(r, o, x, slo, e1_text, "pos", k["echo"], k["follow"])
            e2 = stmt_ep(r, x, o, slx, e2_text, "pos", k["echo"], k["follow"])
            names = dict(A=o.name, B=x.name)
            if key == "race":

                def secs(t):
                    v = 0
                    for part in t.split(":"):
                        v = v * 60 + int(part)
                    return v

                fast, slow = (o, x) if secs(slo["rtime"]) < secs(slx["rtime"]) else (x, o)
                q = Question(
                    "multi-hop",
                    f"Who was faster in the {slo['race']}, {o.name} or {x.name}?",
                    f"{fast.name} ({slo['rtime'] if fast is o else slx['rtime']} against "
                    f"{slx['rtime'] if fast is o else slo['rtime']})",
                    [e1, e2],
                )
            else:
                qt = {
                    "sport": [
                        "What activity have both {A} and {B} taken up?",
                        "What kind of club have both {A} and {B} joined?",
                        "What sport are both {A} and {B} doing twice a week?",
                        "What did both {A} and {B} try for the first time recently?",
                    ],
                    "instrument": [
                        "Which instrument are both {A} and {B} learning?",
                        "Which instrument are both {A} and {B} learning to play?",
                        "What instrument lessons did both {A} and {B} sign up for?",
                        "Which instrument have both {A} and {B} started lessons for?",
                    ],
                    "language": [
                        "What language are both {A} and {B} studying?",
                        "Which language are both {A} and {B} learning?",
                        "What language classes did both {A} and {B} start?",
                    ],
                }[key]
                val = {"sport": "sport", "instrument": "inst", "language": "lang"}[key]
                qq = best_q(r, e1_text, [t.format(**names) for t in qt], slo, r.random() >= PARA_MULTI)
                q = Question("multi-hop", qq, slo[val], [e1, e2])
            self.topics.append(k["topic"])
        else:  # bridge: where the sibling lives + the visit
            o.used.add("sibvisit")
            sl = dict(o.slots(), bcity=r.choice([c for c in CITIES if c not in (o.city,)]))
            two.sort()
            if two[0] == two[1]:
                two[1] = min(self.n - 1, two[0] + 1)
            e1 = stmt_ep(r, o, x, sl, r.choice(SIB_CITY), "pos", [], [], long_p=0)
            e2 = stmt_ep(r, o, x, sl, r.choice(SIB_VISIT), "pos", [], [], long_p=0)
            q = Question(
                "multi-hop",
                fill(
                    r.choice(
                        [
                            "Which city is {N} going to for the visit to {his} {sib}?",
                            "To what city will {N} travel to see {his} {sib}?",
                        ]
                    ),
                    sl,
                ),
                sl["bcity"],
                [e1, e2],
            )
            self.topics.append("family")
        self.sess[two[0]].append(q.eps[0])
        self.sess[two[1]].append(q.eps[1])
        self.qs.append(q)

    # -- filling and assembling sessions
    def add_fillers(self):
        r = self.r
        topics = sorted(set(self.topics))
        for s in range(self.n):
            for _ in range(r.choice([1, 1, 2])):
                o = r.choice(self.pair)
                month = self.times[s].month
                free = [k for k in self.free_kinds(o, KINDS) if month in k.get("months", (month,))]
                if free:
                    k = r.choice(free)
                    o.used.add(k["key"])
                    self.sess[s].append(
                        stmt_ep(
                            r,
                            o,
                            self.other(o),
                            self.sl(k, o),
                            say_text(r, k),
                            k["mood"],
                            k["echo"],
                            k["follow"],
                            required=False,
                        )
                    )
            if r.random() < 0.55:
                t = r.choice(topics)
                if TOPIC_FILLERS.get(t):
                    self.sess[s].append(filler_ep(r, r.choice(TOPIC_FILLERS[t]), self.pair, self.extra(s)))
            if r.random() < 0.3:
                self.sess[s].append(rant_ep(r, self.pair))

    def extra(self, s):
        return dict(friend=self.r.choice(FRIENDS), month=MONTHS[self.times[s].month - 1])

    def greeting(self, s, first) -> list[Turn]:
        r = self.r
        t = self.times[s]
        gap = (t - self.times[s - 1]).days if s else 0
        sec = other(first, self.pair)
        tod = "morning" if t.hour < 12 else "afternoon" if t.hour < 17 else "evening"
        sl = dict(tod=tod, weekday=WD[t.weekday()])
        ex = r.choice(GREETINGS_LONG if gap > 21 and r.random() < 0.7 else GREETINGS)
        if t.hour >= 12:
            ex = [[v for v in line if "Morning" not in v] or line for line in ex]
        turns = []
        for i, line in enumerate(ex):
            who = first if i % 2 == 0 else sec
            if i == 2 and r.random() < 0.3:
                break
            text = fill(r.choice(line), dict(sl, other=other(who, self.pair).name))
            turns.append(Turn(who, pad(r, who, text, GREET_TAILS + GREET_TAILS_TOD[tod] * 2, 0.8)))
        return turns

    def assemble(self, s) -> list[Turn]:
        r = self.r
        first = self.A if s == 0 else r.choice(self.pair)
        eps = list(self.sess[s])
        r.shuffle(eps)
        # a ctx setup must come before nothing in particular; but a setup placed in the same session
        # as its question (only possible in session 0 clamps) goes first
        target = r.randint(18, 36)
        for _ in range(30):
            turns = self.greeting(s, first)
            for ep in eps:
                nxt = other(turns[-1].who, self.pair)
                ep.build(nxt)
                if ep.turns and ep.turns[0].who is turns[-1].who:
                    turns.append(Turn(nxt, r.choice(ACKS)))
                turns.extend(ep.turns)
            nxt = other(turns[-1].who, self.pair)
            turns.append(Turn(nxt, pad(r, nxt, r.choice(CLOSE_1), CLOSE_TAILS, 0.3)))
            turns.append(Turn(other(nxt, self.pair), r.choice(CLOSE_2)))
            if r.random() < 0.05:
                turns.append(Turn(nxt, r.choice(CLOSE_3)))
            if len(turns) < max(14, target - 4):
                fl = [f for f in FILLERS if in_season(f, self.times[s].month)]
                eps.insert(r.randint(0, len(eps)), filler_ep(r, r.choice(fl), self.pair, self.extra(s)))
                continue
            if len(turns) > 40:
                opt = [i for i, e in enumerate(eps) if not e.required]
                if opt:
                    eps.pop(r.choice(opt))
                    continue
            break
        self.sess[s] = eps
        return turns


def plan_counts(r: random.Random) -> dict[str, int]:
    return {
        "single-hop": r.choice([8, 9, 9, 10]),
        "context-dependent": r.choice([6, 6, 7]),
        "multi-hop": r.choice([3, 4, 4]),
        "temporal": r.choice([3, 4, 4]),
        "knowledge-update": r.choice([2, 3, 3]),
    }


def make_conversation(ci: int, r: random.Random, A: Person, B: Person):
    c = Conv(ci, r, A, B)
    counts = plan_counts(r)
    order = ["knowledge-update", "multi-hop", "temporal", "context-dependent", "single-hop"]
    builders = {
        "single-hop": c.single,
        "context-dependent": c.context,
        "multi-hop": c.multi,
        "temporal": c.temporal,
        "knowledge-update": c.update,
    }
    j = r.randint(0, 1)
    for qtype in order:
        for _ in range(counts[qtype]):
            builders[qtype](c.pair[j % 2])
            j += 1
    c.add_fillers()
    sessions = [c.assemble(s) for s in range(c.n)]
    return c, sessions


def build_all(seed: int = SEED):
    r = random.Random(seed)
    fem, mal = list(MAIN_F), list(MAIN_M)
    r.shuffle(fem)
    r.shuffle(mal)
    pairs = [("f", "m"), ("m", "f")] * 3 + [("f", "f"), ("m", "m")] * 3
    r.shuffle(pairs)
    convs = []
    for ci in range(N_CONV):
        side_f, side_m = list(SIDE_F), list(SIDE_M)
        r.shuffle(side_f)
        r.shuffle(side_m)
        genders = pairs[ci % len(pairs)]
        people = []
        for g in genders:
            name = fem.pop() if g == "f" else mal.pop()
            people.append(Person(r, name, g, side_f, side_m))
        convs.append(make_conversation(ci, r, people[0], people[1]))
    return convs


def records(convs) -> list[dict]:
    out = []
    for c, sessions in convs:
        cid = f"d{c.ci + 1:02d}"
        sids = [f"{cid}_s{s + 1:02d}" for s in range(c.n)]
        dates = [stamp(t) for t in c.times]
        where = {id(t): (s, i) for s, turns in enumerate(sessions) for i, t in enumerate(turns)}
        qdate = c.times[-1] + dt.timedelta(days=c.r.randint(2, 20), hours=c.r.randint(-6, 2))
        for qi, q in enumerate(c.qs):
            marks = {where[id(t)] for t in q.evidence()}
            hs = [
                [
                    {
                        "role": "user" if t.who is c.A else "assistant",
                        "content": t.text,
                        "speaker": t.who.name,
                        "has_answer": (s, i) in marks,
                    }
                    for i, t in enumerate(turns)
                ]
                for s, turns in enumerate(sessions)
            ]
            out.append(
                {
                    "question_id": f"{cid}_q{qi + 1:03d}",
                    "question_type": q.qtype,
                    "question": q.question,
                    "answer": q.answer,
                    "question_date": stamp(qdate),
                    "haystack_session_ids": sids,
                    "haystack_dates": dates,
                    "haystack_sessions": hs,
                    "answer_session_ids": [sids[s] for s in sorted({s for s, _ in marks})],
                }
            )
    return out
