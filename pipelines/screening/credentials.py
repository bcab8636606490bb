"""More things stated like a password, for `pipelines.screening`: a wifi key ("the WPA key:
goldfish"), a security question's answer ("the security answer is fluffy") and a login given as a
user and password pair ("login: bob / hunter2x")."""

from __future__ import annotations

import re

from pipelines.screening.passwords import (
    ADJECTIVE_COMPOUND,
    CLOSE_QUOTE,
    CODE_LINE,
    OPEN_QUOTE,
    TRAILING_PUNCT,
    UNIT,
    is_password_literal,
    is_quoted_phrase,
    is_word_password,
    stated_in_prose,
)
from pipelines.screening.text import positions

# --- more things stated like a password: a wifi key, a login given as a pair, a security answer ----
# "the wifi key is sunshine99", "WPA key: goldfish", "psk=Xk29aPq7": a network's key is its password
# (a key alone is not: "the key is in the drawer", nor is "API key is ..." which is a token's).
NETWORK_KEY = re.compile(
    r"(?i)(?:(?:wi-?fi|wlan|wireless|network|router|wpa[23]?(?:-psk)?|wep)"
    r"(?:[ \t]+(?:network|security|wpa[23]?))?[ \t]+(?:key|pass[ \t-]?key)|psk)s?"
    r"(?P<about>[ \t]+(?:for|to|of|on|at)(?:[ \t]+[\w.@'-]{1,30}){1,3}?)?"
    r"(?:[ \t]*(?P<sep>[:=])|[ \t]+(?:is|was)\b(?:[ \t]*:)?(?:[ \t]+(?:now|still|just|currently))?)[ \t]*"
    rf"(?:[{OPEN_QUOTE}](?P<quoted>[^\s{CLOSE_QUOTE}]{{4,64}})[{CLOSE_QUOTE}]"
    r"|(?P<bare>[^\s\"'`]{4,64}+))"
    r"(?P<after>[ \t]*(?:\n|$|\(|[-\u2013\u2014][ \t]|(?:and|but|or|so|for|on|please|if|now)\b))?"
)
_NETWORK_BEFORE = re.compile(  # where a network key's name starts, found back from "key"
    r"(?i)(?:wi-?fi|wlan|wireless|network|router|wpa[23]?(?:-psk)?|wep)"
    r"(?:[ \t]+(?:network|security|wpa[23]?))?"
    r"[ \t]+(?:pass[ \t-]?)?$"
)
# "the security answer is fluffy", "answer to my security question: Smith", "secret answer: Rover"
SECURITY_ANSWER = re.compile(
    r"(?i)(?:(?:security|secret)[ \t]+(?:question['\u2019]?s?[ \t]+)?answer"
    r"|answer[ \t]+to[ \t]+(?:my|the|your|our)[ \t]+(?:[\w'-]{1,20}[ \t]+)?security[ \t]+question)s?"
    r"(?P<about>[ \t]+(?:for|to|of|on|at)(?:[ \t]+[\w.@'-]{1,30}){1,3}?)?"
    r"(?:[ \t]*(?P<sep>[:=])|[ \t]+(?:is|was)\b(?:[ \t]*:)?(?:[ \t]+(?:still|just))?)[ \t]*"
    rf"(?:[{OPEN_QUOTE}](?P<quoted>[^\s{CLOSE_QUOTE}][^\n{CLOSE_QUOTE}]{{1,59}})[{CLOSE_QUOTE}]"
    r"|(?P<bare>[^\s\"'`]{2,40}+))"
    r"(?P<after>[ \t]*(?:\n|$|\(|[-\u2013\u2014][ \t]|(?:and|but|or|so|please|if)\b))?"
)
_NETWORK_TAILS = (
    "fi",
    "wlan",
    "wireless",
    "network",
    "router",
    "wpa",
    "wpa2",
    "wpa3",
    "psk",
    "wep",
    "security",
    "pass",
)
_ANSWER_BEFORE = re.compile(r"(?i)(?:security|secret)[ \t]+(?:question['\u2019]?s?[ \t]+)?$")
# "my netflix login is jane@example.com / Summer2024!", "login: bob / hunter2x": a user, then a
# password (mixed letters and digits or symbols, or quoted) beside it; only after a login's name.
LOGIN_PAIR = re.compile(
    r"(?i)(?:log[ -]?in|sign[ -]?in|log[ -]?on|credentials?|creds)s?"
    r"(?:[ \t]+(?:details|info))?"
    r"(?P<about>[ \t]+(?:for|to|of|on|at)(?:[ \t]+[\w.@'-]{1,30}){1,3}?)?"
    r"(?:[ \t]*[:=]|[ \t]+(?:is|are|was|were)\b(?:[ \t]*:)?)[ \t]*"
    r"(?P<user>[A-Za-z0-9][\w.@+-]{0,63}?)"
    r"(?:[ \t]+/[ \t]*|[ \t]*/[ \t]+|[ \t]*\|[ \t]*|:|[ \t]*,[ \t]*)"
    rf"(?:[{OPEN_QUOTE}](?P<quoted>[^\s{CLOSE_QUOTE}]{{4,64}})[{CLOSE_QUOTE}]|(?P<bare>[^\s\"'`]{{4,64}}+))"
    r"(?=[ \t]*(?:\n|$|[(\u2013\u2014-]|(?:and|but|or|so|please|if)\b))"
)


_LOGIN_STARTS = ("login", "log in", "log-in", "logon", "log on", "log-on", "sign", "cred")


def _value_stated(text: str, i: int, m: re.Match[str], words: bool) -> bool:
    """The value of a statement matched at `i` is a password: a literal, or (where `words`) a plain
    word or quoted words, ending the clause, in prose rather than code."""
    quoted = m["quoted"] is not None
    value = m["quoted"] if quoted else m["bare"].rstrip(TRAILING_PUNCT)
    clause_end = quoted or m["after"] is not None or value != m["bare"]
    if not (clause_end or m["sep"] in (":", "=")) or ADJECTIVE_COMPOUND.fullmatch(value):
        return False
    literal = is_password_literal(value, quoted)
    wordy = (
        words and (quoted or clause_end) and (is_word_password(value) or (quoted and is_quoted_phrase(value)))
    )
    return bool(literal or wordy) and stated_in_prose(text, i, m)


def has_stated_credential(text: str, low: str, key: bool, cred: bool) -> bool:
    """A wifi key, a security question's answer or a login pair stated in prose: read as a password.
    `key`, `cred`: whether "key" and "cred" are in `low` (the caller's gates, shared with other rules)."""
    for i, _ in positions(low, ("key", "psk") if key else ("psk",)):
        prev = low[max(0, i - 12) : i].split()[-1:] if low[i] == "k" else ()
        if prev and not prev[0].endswith(_NETWORK_TAILS):
            continue  # a set lookup first ("the key is ..."), the regex to confirm
        before = _NETWORK_BEFORE.search(text, max(0, i - 40), i) if prev else None
        at = before.start() if before else i
        m = NETWORK_KEY.match(text, at) if not (at and text[at - 1].isalnum()) else None
        if m and _value_stated(text, at, m, words=True):
            return True
    for i, _ in positions(low, ("answer",)):
        before = _ANSWER_BEFORE.search(text, max(0, i - 40), i)
        at = before.start() if before else i
        m = SECURITY_ANSWER.match(text, at) if not (at and text[at - 1].isalnum()) else None
        if m and _value_stated(text, at, m, words=True):
            return True
    for i, _ in positions(low, ("log", "sign", "cred") if cred else ("log", "sign")):
        if (i and low[i - 1].isalnum()) or not low.startswith(_LOGIN_STARTS, i):
            continue  # "blog", "design", "logic": a prefix test before the regex
        m = LOGIN_PAIR.match(text, i)
        if not m:
            continue
        value = m["quoted"] or m["bare"].rstrip(TRAILING_PUNCT)
        mixed = re.search("[A-Za-z]", value) and re.search("[^A-Za-z]", value)
        quoted = m["quoted"] is not None  # quoted, words may be the password: "admin / 'blue-whale'"
        if (mixed or quoted) and (is_password_literal(value, quoted) or (quoted and is_word_password(value))):
            line = text[text.rfind("\n", 0, i) + 1 : i].lstrip(" \t-*>#\u2022")
            if not CODE_LINE.match(line) and not UNIT.fullmatch(value):
                return True
    return False
