"""The text the rules read: fullwidth or styled letters, invisible characters and odd spaces
must not hide a secret from them."""

from __future__ import annotations

import re
import unicodedata

# Characters that draw nothing: zero-width space/joiners, word joiner, soft hyphen, BOM, bidi
# controls, tag characters, variation selectors, Hangul fillers (every Unicode "Cf" is listed).
_INVISIBLE_CHARS = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\U000e0000-\U000e0fff"
    "\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
)
_SPACE_CHARS = "\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"  # every non-ASCII space
_INVISIBLE = re.compile(f"[{_INVISIBLE_CHARS}]")
_SPECIAL = re.compile(f"[{_INVISIBLE_CHARS}{_SPACE_CHARS}]")
_LINE_BREAK = re.compile("[\x85\u2028\u2029]")
_ODD_SPACE = re.compile(f"[{_SPACE_CHARS}]")
GLUED_SPACE = re.compile(r"(?<=\S)[\xa0\u2000-\u200a\u202f\u205f\u3000](?=\S)")  # a space inside a token


def normalise(text: str, glue: bool = False) -> str:
    """The text the rules read: NFKC (fullwidth and styled letters to ASCII), invisible characters
    removed, Unicode spaces and line breaks made plain (`glue`: such spaces inside a token removed).
    ASCII text is returned as is."""
    if text.isascii():
        return text
    if _SPECIAL.search(text):  # one scan; most non-ASCII text only holds accents, quotes or emoji
        text = _INVISIBLE.sub("", text)
        text = GLUED_SPACE.sub("", text) if glue else text
        text = _ODD_SPACE.sub(" ", _LINE_BREAK.sub("\n", text))
    return unicodedata.normalize("NFKC", text)
