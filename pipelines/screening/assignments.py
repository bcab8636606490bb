"""Secrets assigned in code or named in prose, for `pipelines.screening`: an assignment of a literal
to a secret-ish name (``api_key = "…"``), and a secret named and given ("the deploy token: …"),
judged so that variables, ids, hashes and placeholders are not secrets."""

from __future__ import annotations

import re

from pipelines.screening.passwords import (
    NOT_LITERAL_START,
    PLACEHOLDER_MARKS,
    TRAILING_PUNCT,
    is_password_literal,
)
from pipelines.screening.tables import table
from pipelines.screening.text import positions, shannon_entropy, word_coverage

_DATA = table("assignments")  # the word lists

# --- assignments: matched right after a secret-ish word; the whole identifier is judged in code ---
ASSIGNMENT_KEYWORDS = ("key", "secret", "token", "credential", "auth", "bearer")  # and "pass", "pwd"
ASSIGNMENT = re.compile(  # continues after the keyword: rest of the name, separator, value
    r"[\w.-]{0,40}+[\"']?[ \t]{0,3}(?::=|=>|==|=|:)[ \t]{0,3}"
    r"(?:[rbuf]{0,2}([\"'`])(?P<quoted>[^\"'`\n]{0,200})\1|(?P<bare>[^\s\"'`,;]{1,200}))"
)
# "my mailchimp auth token is 3f2a...", "api key 9c1e...": a secret named in prose, then a value.
_SECRET_NOUNS = ("token", "key", "secret", "credential", "creds", "auth")
_WORDS_BEFORE = re.compile(r"(?:[\w'.-]{1,30}[:=]?[ \t]+){0,3}[\w.-]{0,40}$")  # up to 3 words, same clause
SECRET_STATEMENT = re.compile(
    r"[A-Za-z]{0,12}(?P<about>(?:[ \t]+[\w.@'-]{1,30}){0,4}?)"
    r"(?:[ \t]*(?P<sep>[:=\u2014\u2013]|->|-)|[ \t]+(?P<verb>is|was|are|here)\b(?:[ \t]*:)?|(?=[ \t]))"
    r"[ \t]*[\"'`]?(?P<value>[\w+/=.~-]{20,200}+)"
)
_NOT_CREDENTIAL_WORDS = set(_DATA["not_credential_words"])
_IDENTIFIER_TAIL = re.compile(r"[\w.-]{1,40}$")
_IDENTIFIER_HEAD = re.compile(r"[\w.-]{1,60}")
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")  # splits snake_case, kebab and camelCase
PASSWORD_WORDS = set(_DATA["password_words"])
_SECRET_WORDS = PASSWORD_WORDS | set(_DATA["secret_words"])
_KEY_QUALIFIERS = set(_DATA["key_qualifiers"])
_NOT_SECRET_WORDS = set(_DATA["not_secret_words"])
_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
_SLUG = re.compile(r"(?:[A-Za-z][a-z]*|[A-Z]+|\d+)(?:[-_./](?:[A-Za-z][a-z]*|[A-Z]+|\d+))+")
_SECRET_CHARS = re.compile(r"[\w+/=.~-]+")
_QUOTED_SECRET_CHARS = re.compile(r"[!-~]+")  # printable ASCII, no spaces


# A generic secret must look machine-made. Measured per-char Shannon entropy of random strings
# (mean / 0.1th percentile): base62 20 chars 4.0 / 3.5, 32 chars 4.6 / 4.1; hex 24 chars 3.5 / 2.9,
# 32 chars 3.6 / 3.1. A threshold of 3.0 keeps practically every base62 key and 32-hex key while
# rejecting repetitive stand-ins ("aaaa1111bbbb2222cccc", "abcabc123123..."). Word-made names score
# 3.4-3.9 too ("user_profile_settings_2024_v2": 3.9), so the slug/word checks, not entropy, reject those.
SECRET_MIN_LEN = 20
SECRET_MIN_ENTROPY = 3.0


def looks_random(v: str, quoted: bool = False) -> bool:
    low = v.lower()
    # Unquoted, a value is one token of key characters; quoted it may hold any printable symbol
    # (Django's SECRET_KEY = "django-insecure-k#3$...") but not a template or variable reference.
    chars_ok = _QUOTED_SECRET_CHARS.fullmatch(v) and not v.startswith(NOT_LITERAL_START)
    if len(v) < SECRET_MIN_LEN or not (chars_ok if quoted else _SECRET_CHARS.fullmatch(v)):
        return False
    if not re.search(r"[A-Za-z]", v):
        return False  # a number is no key
    if not re.search(r"[0-9]", v) and not (
        re.search(r"[a-z]", v)
        and re.search(r"[A-Z]", v)
        and word_coverage(v) < 0.4
        and shannon_entropy(v) >= 3.5
    ):
        return False  # letters only: a key mixes both cases at random ("kQpZrXwT..."), a name has words
    if any(w in low for w in PLACEHOLDER_MARKS) or "://" in v or v.startswith(("/", "./", "~/")):
        return False
    if _UUID.fullmatch(v) or _SLUG.fullmatch(v):
        return False  # UUIDs identify things; slugs and dotted paths are names
    if word_coverage(v) >= 0.5:
        return False  # mostly dictionary-looking runs: a variable or config name
    return shannon_entropy(v) >= SECRET_MIN_ENTROPY


def _identifier_words(text: str, start: int) -> list[str]:
    """The words of the whole identifier around position `start` (where a keyword was found)."""
    head = _IDENTIFIER_TAIL.search(text, max(0, start - 40), start)
    tail = _IDENTIFIER_HEAD.match(text, start)
    name = (head.group() if head else "") + (tail.group() if tail else "")
    return [w.lower() for w in _WORDS.findall(name)]


def _is_secret_name(words: list[str]) -> bool:
    if not words or any(w in _NOT_SECRET_WORDS for w in words):
        return False
    if any(w in _SECRET_WORDS for w in words):
        return True
    return "key" in words and any(w in _KEY_QUALIFIERS for w in words)


def assigned(text: str, keywords: list[tuple[int, str]]) -> set[str]:
    found: set[str] = set()
    last_end = -1
    for i, word in keywords:
        # Skip a keyword inside the last assignment (its name, e.g. "key" in "secret_key", or value).
        m = ASSIGNMENT.match(text, i + len(word)) if i >= last_end else None
        if not m:
            continue
        last_end = m.end()
        quoted = m.group("quoted") is not None
        value = m.group("quoted") if quoted else m.group("bare").rstrip(TRAILING_PUNCT)
        if len(value) < 4:  # too short for any rule below; skip the name analysis
            continue
        words = _identifier_words(text, i)
        if words and words[-1] in PASSWORD_WORDS and is_password_literal(value, quoted):
            found.add("password")
        elif _is_secret_name(words) and looks_random(value, quoted):
            found.add("secret_assignment")
    return found


def has_secret_statement(text: str, low: str) -> bool:
    for i, noun in positions(low, _SECRET_NOUNS):
        if i and low[i - 1].isalpha() and not low.startswith(("api", "auth", "access"), max(0, i - 6)):
            continue  # "monkey", "turkey"; but "apikey", "authtoken", "accesstoken"
        m = SECRET_STATEMENT.match(text, i + len(noun))
        if not m or (m["about"] and not (m["sep"] or m["verb"])):
            continue  # no separator, so "token refresh in commit 3f2a..." names no token value
        value = m["value"].rstrip(".,;:")
        if m["value"].endswith("..") or text.startswith("\u2026", m.end()):
            continue  # elided: "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9..."
        if not looks_random(value) or re.fullmatch(r"0x[0-9a-fA-F]{40}", value):
            continue  # not a key, or a public blockchain address
        before = _WORDS_BEFORE.search(text, max(0, i - 80), i)
        name = (before.group() if before else "") + text[i : m.start("about")] + m["about"]
        words = [w.lower() for w in _WORDS.findall(name)]
        if names_other_value(text, i) or any(
            w in _NOT_SECRET_WORDS or w in _NOT_CREDENTIAL_WORDS for w in words
        ):
            continue
        plural = {"tokens": "token", "keys": "key", "secrets": "secret", "creds": "credential"}
        if _is_secret_name([plural.get(w, w) for w in words]):
            return True
    return False


def names_other_value(text: str, at: int) -> bool:
    """The words just before `at` (same clause) say the value there is an id or a hash."""
    before = _WORDS_BEFORE.search(text, max(0, at - 80), at)
    words = [w.lower() for w in _WORDS.findall(before.group() if before else "")]
    return any(w in _NOT_SECRET_WORDS or w in _NOT_CREDENTIAL_WORDS for w in words)
