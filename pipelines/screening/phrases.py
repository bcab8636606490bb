"""A passphrase of plain words, for `pipelines.screening`: "the vault passphrase is: river stone
lantern moss", a number spelled out among the words ("twelve angry lanterns"), a wallet's seed or
recovery phrase of 12 to 24 words, and three or more plain words given as a password ("my password
is river seven lantern moss"). Words of a description ("the passphrase is seven words long", "one
you can remember") are no passphrase. Pure stdlib, like `pipelines.screening.statements` whose word
lists it shares."""

from __future__ import annotations

import re

from pipelines.screening.passwords import (
    CODE_LINE,
    CONDITION_BEFORE,
    DESCRIPTIVE,
    FUNCTION_WORDS,
    NOT_PASSWORD_WORDS,
    is_number_word,
)
from pipelines.screening.text import positions

# --- a passphrase of plain words: "the vault passphrase is: river stone lantern moss" -------------
# Several words after "passphrase is" / "passphrase:", ending the clause; none a function word
# ("the passphrase is a sentence you can remember", "passphrase: at least four words"). A wallet's
# seed or recovery phrase is 12 to 24 lower-case words (BIP-39's list holds "about" and "above").
PASSPHRASE = re.compile(
    r"(?i)(?P<word>pass[ -]?phrase|(?P<pw>passw(?:or)?d)"
    r"|(?P<seed>(?:seed|recovery|backup|mnemonic|secret[ \t]+recovery)[ \t]+(?:phrase|words)|mnemonic"
    r"|(?P<bare_seed>seed)))s?\b"
    r"(?P<about>[ \t]+(?:for|to|of|on)(?:[ \t]+[\w.@'-]{1,30}){1,3}?)?"
    r"(?:[ \t]*[:=]|[ \t]+(?:is|was|are|were)\b(?:[ \t]*:)?|['\u2019]s\b)[ \t]*"
    r"(?:[\"'`\u201c\u2018](?P<quoted>[A-Za-z][\w' -]{2,300}?)[\"'`\u201d\u2019]"
    r"|(?P<bare>[A-Za-z][\w'-]{0,24}(?:[ \t]+[A-Za-z][\w'-]{0,24}){1,23}))"
    r"(?=[\"'`\u201d\u2019]?(?:[ \t]*(?:\n|$)|[.!?,;)][ \t\n]|[.!?,;)]$|[ \t]+[(\u2013\u2014-]))"
)
_PASSPHRASE_WORD = re.compile(r"[a-z]{2,15}|[A-Z][a-z]{1,14}")
_PHRASE_BEFORE = re.compile(  # where a phrase's name starts: "pass phrase", "secret recovery phrase"
    r"(?i)(?:pass[ -]?|(?:seed|recovery|backup|mnemonic|secret[ \t]+recovery)[ \t]+)$"
)


def has_passphrase(text: str, low: str) -> bool:
    """Plain words given as a passphrase, a wallet's seed words, or three or more plain words given
    as a password ("my password is river seven lantern moss")."""
    starts = [i for i, _ in positions(low, ("mnemonic", "seed", "password", "passwd"))]
    for i, _ in positions(low, ("phrase",)):
        before = _PHRASE_BEFORE.search(text, max(0, i - 20), i)
        starts += [before.start()] if before else []
    for at in starts:
        m = PASSPHRASE.match(text, at) if not (at and text[at - 1].isalnum()) else None
        if not m:
            continue
        words = (m["quoted"] or m["bare"]).split()
        if not all(_PASSPHRASE_WORD.fullmatch(w) or is_number_word(w) for w in words):
            continue  # digits or names of code: not plain words
        lows = [w.lower() for w in words]
        plural = text[m.end("word") : m.end("word") + 1] in "sS"
        if m["pw"] and (len(words) < 3 or m["quoted"] or plural or not _plain_words_stated(text, at)):
            continue  # one or two words after "password is": `assignment_shapes` judges those
        if m["bare_seed"] or (m["seed"] and m["word"].lower().endswith("words")):
            # "my bitcoin seed: ...", "seed words: ...": a wallet's 12 to 24 words (in threes, each of
            # BIP-39's 3-8 letters), not a sentence ("seed: plant them after the last frost ...").
            if (
                len(words) in (12, 15, 18, 21, 24)
                and all(w.islower() and 3 <= len(w) <= 8 for w in words)
                and len(set(lows)) > 6
                and sum(w in FUNCTION_WORDS for w in lows) <= 2
            ):
                return True
            continue
        if m["seed"]:
            if 12 <= len(words) <= 24 and all(w.islower() for w in words) and len(set(lows)) > 6:
                return True
            continue
        if not 2 <= len(words) <= 12:
            continue
        # A number spelled out may be among two or more plain words ("twelve angry lanterns"), not
        # most of them ("one two three four") nor the length of a phrase ("seven words long").
        plain = [w for w in lows if not is_number_word(w)]
        if len(plain) < len(lows) and (len(plain) < 2 or 2 * len(plain) < len(lows)):
            continue
        if any(w in FUNCTION_WORDS for w in plain) or len(set(lows)) < len(lows):
            continue
        # Most words plain (a judgement may be one: "correct horse battery staple"), all of two.
        judged = sum(w in NOT_PASSWORD_WORDS or bool(DESCRIPTIVE.fullmatch(w)) for w in plain)
        mostly_plain = 2 * judged < len(plain) if len(plain) > 2 else not judged
        if mostly_plain and plain[-1] not in NOT_PASSWORD_WORDS:
            return True
    return False


def _plain_words_stated(text: str, i: int) -> bool:
    """Words after "password is" at `i` are stated in prose: no condition or code before them."""
    line = text[text.rfind("\n", 0, i) + 1 : i].lstrip(" \t-*>#\u2022")
    return not (CODE_LINE.match(line) or CONDITION_BEFORE.search(text, max(0, i - 50), i))
