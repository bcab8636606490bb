"""Content words and the light stemmer (the same one the sanity check ranks with)."""

# ruff: noqa: E501  (the templates are data: long chat lines read better unbroken)
from __future__ import annotations

import re

# words: content words, a light stemmer (the same one the sanity check ranks with)

STOP = set(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing done down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself no nor not now of off on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there these
    they this those through to too under until up very was we were what when where which while who
    whom why will with would you your yours yourself yourselves im ive id ill youre youve dont didnt
    cant wont isnt wasnt couldnt doesnt arent havent don didn can won isn wasn couldn doesn aren haven
    get got gets getting go goes going gone went gonna wanna gotta also still even really much many
    lol haha hahaha omg ok okay oh yeah yes yep nope yay hey hi hii wow like lot lots bit thing things
    one ones s t re ve ll d m u ur rn tho btw thats theres whats hes shes its let lets yet ever every
    let's it's that's what's he's she's there's who's here's i'm i've i'd i'll you're you've you'd
    we're we've they're they've can't won't don't didn't isn't wasn't doesn't aren't haven't hasn't
    hadn't couldn't wouldn't shouldn't ain't gonna y'all kind sort something anything everything
    nothing someone anyone everyone well new good great""".split()
)
# "new", "good", "great" are so common in chat that they are treated as stop words.

_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def stem(w: str) -> str:
    stripped = False
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 5 and w.endswith("ing"):
        w, stripped = w[:-3], True
    elif len(w) > 4 and w.endswith("ed"):
        w, stripped = w[:-2], True
    elif len(w) > 4 and w.endswith("es") and w[-3] in "sxz":
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if stripped and len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
        w = w[:-1]
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


def tokens(text: str) -> list[str]:
    """Content-word stems of a text, in order, with repeats (for BM25)."""
    out = []
    for t in _TOKEN.findall(text.lower().replace("\u2019", "'")):
        if t in STOP:
            continue
        t = re.sub(r"'(s|re|ve|ll|d|m|t)$", "", t)
        if not t or t in STOP:
            continue
        out.append(stem(t))
    return out


def content(text: str) -> set[str]:
    return set(tokens(text))
