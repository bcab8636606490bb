"""Turns and episodes."""

# ruff: noqa: E501  (the templates are data: long chat lines read better unbroken)
from __future__ import annotations

import random

from base import data
from chitchat import (
    ANNOUNCE,
    ASK_LEADS,
    ASKED,
    CHAT_TAILS,
    CLOSERS,
    CTX_TAILS,
    GEN_TAILS,
    GENERIC_ASK,
    NEWS_BRIDGE,
    PROMPT_LEAD,
    PROMPT_TAILS,
    RANTS,
    REACT,
    REACT_TAILS,
    RESP_TAILS,
)
from people import Person, fill
from words import content


def pad(r, who, text, pool, scale=1.0, sl=None, before=False):
    """A second sentence from pool, as often as the speaker tends to write one."""
    if r.random() < who.verb * scale:
        a = r.choice(pool)
        extra = fill(a, sl if sl is not None else who.slots())
        text = sjoin(extra, text) if before else sjoin(text, extra)
    return text


def ask(r, who) -> str:
    return pad(r, who, surf(r, r.choice(GENERIC_ASK)), ASK_LEADS, 0.9, before=True)


class Turn:
    __slots__ = ("who", "text")

    def __init__(self, who: Person, text: str):
        self.who, self.text = who, text


class Ep:
    """A run of turns built when the session is assembled (who speaks first is known only then).
    The facts (slots, the evidence wording) are fixed when the episode is planned; building only
    chooses the framing (who opens, reactions, follow-ups), so a rebuild never changes an answer."""

    def __init__(self, fn, required: bool):
        self.fn, self.required = fn, required
        self.turns: list[Turn] = []
        self.ev: list[Turn] = []

    def build(self, first: Person):
        self.turns, self.ev = self.fn(first)


class Question:
    def __init__(self, qtype: str, question: str, answer: str, eps: list[Ep]):
        self.qtype, self.question, self.answer, self.eps = qtype, question, answer, eps

    def evidence(self) -> list[Turn]:
        return [t for ep in self.eps for t in ep.ev]


_EPISODES = data("episodes")  # this section's templates and pools: data/episodes.json
FOLLOW_ACKS = _EPISODES["FOLLOW_ACKS"]
NEG_TAILS = _EPISODES["NEG_TAILS"]
O_SMALL_NEG = _EPISODES["O_SMALL_NEG"]
CTX_AFTER_TAILS = _EPISODES["CTX_AFTER_TAILS"]
CTX_BACK = _EPISODES["CTX_BACK"]
LONG_TAILS = _EPISODES["LONG_TAILS"]
O_SMALL = _EPISODES["O_SMALL"]
SETUP_REACT = _EPISODES["SETUP_REACT"]
SETUP_TAILS = _EPISODES["SETUP_TAILS"]
SETUP_REACT_TAILS = _EPISODES["SETUP_REACT_TAILS"]
SETUP_BACK = _EPISODES["SETUP_BACK"]
RANT_REACT = _EPISODES["RANT_REACT"]
RANT_BACK = ["right??", "I'm still processing", "anyway", "lol yes", "thank you for listening"]


def ends_open(s: str) -> bool:
    return bool(s) and (s[-1].isalnum() or s[-1] in ")\"'")


def sjoin(a: str, b: str) -> str:
    return f"{a}. {b}" if ends_open(a) else f"{a} {b}"


def lead(pre: str, text: str, sl: dict) -> str:
    """Prefix a chat opener, lower-casing the text's first letter unless it is 'I' or a name."""
    if not pre:
        return text
    if pre.rstrip().lower().endswith("so") and text.lower().startswith("so "):
        text = text[3:]
    protected = [v for v in sl.values() if isinstance(v, str) and v[:1].isupper()]
    if text.startswith(("I ", "I'")) or any(text.startswith(v) for v in protected) or text[:2].isupper():
        return pre + text
    return pre + text[0].lower() + text[1:]


def surf(r: random.Random, text: str) -> str:
    """Chat surface noise on non-evidence lines: a dropped full stop, a lower-case start, a 'lol'."""
    if text.endswith(".") and not text.endswith("..") and r.random() < 0.6:
        text = text[:-1]
    if text[:1].isupper() and text[1:2].islower() and r.random() < 0.2 and not text.startswith(("I ", "I'")):
        text = text[0].lower() + text[1:]
    if ends_open(text) and r.random() < 0.07:
        text += r.choice([" lol", " haha", " \U0001f605", "!!"])
    return text


def other(p: Person, pair: tuple[Person, Person]) -> Person:
    return pair[1] if p is pair[0] else pair[0]


def stmt_ep(
    r, o, x, sl, text, mood, echo, follow, required=True, long_p=0.08, react_tail=True, tail=True
) -> Ep:

    def fn(first):
        turns: list[Turn] = []
        asked = first is x
        if asked:
            turns.append(Turn(x, ask(r, x)))
        stmt = lead(r.choice(ASKED if asked else ANNOUNCE), fill(text, sl), sl)
        fol = list(follow)
        r.shuffle(fol)
        details = [f for f in fol if len(f) > 2]
        tails = NEG_TAILS if mood in ("neg", "relief") else GEN_TAILS
        if len(details) >= 2 and r.random() < long_p:
            for f in details[:2]:
                stmt = sjoin(stmt, fill(f[2], sl))
                fol.remove(f)
            stmt = sjoin(sjoin(stmt, fill(r.choice(tails), o.slots())), r.choice(LONG_TAILS))
        elif details and r.random() < o.verb * 0.6:
            f = details[0]
            stmt = sjoin(stmt, fill(f[2], sl))
            fol.remove(f)
        elif tail:
            stmt = pad(r, o, stmt, tails, 0.5)
        ev = Turn(o, stmt)
        turns.append(ev)
        if echo and r.random() < 0.7:
            rx = fill(r.choice(echo), sl)
            if r.random() < 0.5:
                rx = sjoin(r.choice(REACT[mood]), rx)
        else:
            rx = r.choice(REACT[mood])
        nf = min(len(fol), r.choice([0, 1, 1, 2, 2]))
        if nf == 0:
            turns.append(Turn(x, pad(r, x, rx, REACT_TAILS[mood], 1.25 if react_tail else 0)))
        for i in range(nf):
            qf, af = fol[i][:2]
            if i == 0:
                turns.append(
                    Turn(x, sjoin(pad(r, x, rx, REACT_TAILS[mood], 0.5 if react_tail else 0), fill(qf, sl)))
                )
            else:
                turns.append(Turn(x, lead(r.choice(FOLLOW_ACKS), fill(qf, sl), sl)))
            turns.append(Turn(o, pad(r, o, surf(r, fill(af, sl)), tails, 0.75)))
        if r.random() < 0.25:
            if turns[-1].who is o:
                turns.append(Turn(x, pad(r, x, r.choice(CLOSERS[mood]), REACT_TAILS[mood], 1.0)))
            else:
                small = O_SMALL if mood == "pos" else O_SMALL_NEG if mood in ("neg", "relief") else CTX_BACK
                turns.append(Turn(o, pad(r, o, r.choice(small), tails, 0.6 if react_tail else 0)))
        return turns, [ev]

    return Ep(fn, required)


def ctx_ep(r, k, o, x, sl, prompt, reply, qtext="", required=True) -> Ep:
    qwords = content(qtext)
    tails = [t for t in CTX_TAILS if not content(t) & qwords]

    def fn(first):
        turns: list[Turn] = []
        if first is o:
            turns.append(Turn(o, r.choice(NEWS_BRIDGE)))
        pre = r.choice(PROMPT_LEAD) if turns else ""
        ptext = lead(pre, fill(prompt, sl), sl)
        if r.random() < x.verb * 0.35:
            ptext = (
                sjoin(r.choice(PROMPT_TAILS), ptext)
                if r.random() < 0.5
                else sjoin(ptext, r.choice(PROMPT_TAILS))
            )
        turns.append(Turn(x, ptext))
        rtext = fill(reply, sl)
        if r.random() < o.verb * 0.4:
            rtext = sjoin(rtext, r.choice(tails))
        ev = Turn(o, rtext)
        turns.append(ev)
        after = fill(r.choice(k["after"]), sl)
        turns.append(Turn(x, pad(r, x, after, CTX_AFTER_TAILS, 0.7)))
        if r.random() < 0.2:
            turns.append(Turn(o, r.choice(CTX_BACK)))
        return turns, [ev]

    return Ep(fn, required)


def setup_ep(r, o, x, sl, text, mood="pos") -> Ep:
    def fn(first):
        turns: list[Turn] = []
        if first is x:
            turns.append(Turn(x, ask(r, x)))
        turns.append(Turn(o, pad(r, o, lead(r.choice(ANNOUNCE), fill(text, sl), sl), SETUP_TAILS, 0.5)))
        turns.append(Turn(x, pad(r, x, r.choice(SETUP_REACT[mood]), SETUP_REACT_TAILS, 0.8)))
        if r.random() < 0.4:
            turns.append(Turn(o, r.choice(SETUP_BACK)))
        return turns, []

    return Ep(fn, True)


def in_season(lines, month: int) -> bool:
    """Snow only in winter, heat waves only in summer (northern hemisphere)."""
    text = " ".join(v for line in lines for v in line).lower()
    if "snow" in text:
        return month in (11, 12, 1, 2, 3)
    if "so hot" in text or "35 degrees" in text or "water balloon" in text:
        return month in (6, 7, 8, 9)
    return True


def filler_ep(r, lines, pair, extra: dict) -> Ep:
    def fn(first):
        a = first
        b = other(a, pair)
        out = []
        use = lines if len(lines) < 3 or r.random() < 0.5 else lines[:2]
        for i, v in enumerate(use):
            who = a if i % 2 == 0 else b
            sl = dict(who.slots(), **extra)
            text = surf(r, fill(r.choice(v), sl))
            if i == 0:
                text = pad(r, who, text, CHAT_TAILS, 0.45)
            elif i == 1:
                text = pad(r, who, text, RESP_TAILS, 0.45)
            out.append(Turn(who, text))
        return out, []

    return Ep(fn, False)


def rant_ep(r, pair) -> Ep:
    src = r.choice(RANTS)

    def fn(first):
        k = r.randint(4, min(6, len(src)))
        keep = sorted(r.sample(range(1, len(src)), k - 1))
        text = " ".join([src[0]] + [src[i] for i in keep])
        b = other(first, pair)
        turns = [Turn(first, text), Turn(b, pad(r, b, r.choice(RANT_REACT), RESP_TAILS, 0.8))]
        if r.random() < 0.3:
            turns.append(Turn(first, r.choice(RANT_BACK)))
        return turns, []

    return Ep(fn, False)
