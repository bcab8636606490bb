"""What the rules ask of a text: where their words are, how much of a value reads as words, and how
random it is."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator

_WORDISH = re.compile(r"[A-Z]?[a-z]{3,}")


def positions(low: str, words: tuple[str, ...]) -> Iterator[tuple[int, str]]:
    """Every position of each of `words` in `low` (a C-speed find, so a rule matches only there)."""
    for word in words:
        i = low.find(word)
        while i != -1:
            yield i, word
            i = low.find(word, i + 1)


def word_coverage(v: str) -> float:
    """The share of `v` in runs of 3+ letters that have a vowel per 5 letters, as words have: names
    such as "recommendationEngineV2" score ~0.9. Random base62 has lowercase runs too, but vowel-poor
    ones ("Dfiycd"): at < 0.5 this rejects 1.2 % of random 20-char keys, 0.1 % of 40-char ones."""
    words = (w for w in _WORDISH.findall(v) if 5 * sum(c in "aeiouAEIOU" for c in w) >= len(w))
    return sum(map(len, words)) / len(v)


def shannon_entropy(s: str) -> float:
    """Bits per character of `s` under its own character frequencies."""
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values()) if n else 0.0
