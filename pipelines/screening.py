"""Sensitivity screening: does a turn's text hold a *high* shape (a secret or a personal number)?

A high turn is stored as written but never embedded, never sent to a model and never returned by
search. A false positive silently hides an ordinary turn, so each shape is paired with checks that
keep precision: provider prefixes need random-looking bodies, assignments must assign a literal
(not a variable, type, env lookup or placeholder), card numbers need an issuer prefix and Luhn, etc.

Pure stdlib and fast, since it runs inline on every write (~0.1-0.4 ms per 10 kB): each check is
gated by substring tests at C speed, keyword rules match only where the keyword occurs, and every
repeat is bounded or possessive with nothing nested, so there is no catastrophic backtracking.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

HIGH = "high"
NONE = "none"
EXCERPT_LOOKAHEAD = 1024  # chars past the shown part of an excerpt that are screened too


@dataclass(frozen=True)
class Screen:
    level: str  # HIGH or NONE
    shapes: tuple[str, ...] = ()  # names of the shapes found, empty when NONE


# --- provider tokens: a known prefix plus a long body that must also look random -----------------
API_KEY = re.compile(
    r"(?<![\w-])(?P<prefix>"
    r"sk-(?:ant-|proj-|svcacct-|admin-)?(?=[\w-]{20})"  # Anthropic sk-ant-, OpenAI sk- / sk-proj-
    r"|gh[pousr]_(?=[A-Za-z0-9]{36})|github_pat_(?=\w{50})"  # GitHub classic and fine-grained
    r"|xox[bpas]-(?=[A-Za-z0-9-]{20})"  # Slack
    r"|(?:AKIA|ASIA)(?=[0-9A-Z]{16}(?![\w-]))"  # AWS access key id: exactly 16 more
    r"|AIza(?=[\w-]{35}(?![\w-]))"  # Google: exactly 35 more
    r"|[sr]k_live_(?=[A-Za-z0-9]{16})"  # Stripe live secret / restricted keys
    r"|glpat-(?=[\w-]{20})|hf_(?=[A-Za-z0-9]{30})|npm_(?=[A-Za-z0-9]{36})"  # GitLab, HF, npm
    r")(?P<body>[\w-]{10,300}+)(?![\w-])"  # {..}+ and *+ below are possessive: no backtracking
)
# Gate for API_KEY: a substring scan per literal is ~1 ns/char, the regex alone ~50.
_API_KEY_LITERALS = ("sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "AKIA", "ASIA",
                     "AIza", "k_live_", "glpat-", "hf_", "npm_")  # fmt: skip
JWT = re.compile(r"eyJ(?<![\w-]eyJ)[\w-]{8,}+\.eyJ[\w-]{8,}+\.[\w-]{16}")  # header.payload.signature
PRIVATE_KEY = re.compile(r"-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----")
_PEM_BODY = re.compile(r"[A-Za-z0-9+/]{40,}")  # a real block has base64 lines; "..." does not
BEARER = re.compile(r"\b(?:[Bb]earer|Basic)[ \t]+([\w.~+/-]{20,300}+=*+)(?![\w.~+/-])")

# --- assignments: matched right after a secret-ish word; the whole identifier is judged in code ---
ASSIGNMENT_KEYWORDS = ("key", "secret", "token", "pass", "pwd", "credential", "auth", "bearer")
ASSIGNMENT = re.compile(  # continues after the keyword: rest of the name, separator, value
    r"[\w.-]{0,40}+[\"']?[ \t]{0,3}(?::=|=>|==|=|:)[ \t]{0,3}"
    r"(?:[rbuf]{0,2}([\"'`])(?P<quoted>[^\"'`\n]{0,200})\1|(?P<bare>[^\s\"'`,;]{1,200}))"
)
PASSWORD_STATEMENT = re.compile(  # "my password is Tr0ub4dor&3." -- only a lone token ending a clause
    r"(?i)\bpass(?:word|code|phrase)[ \t]+(?:is|was)[ \t]*:?[ \t]*(?:[\"'`](?P<quoted>[^\s\"'`]{4,64})[\"'`]"
    r"|(?P<bare>[^\s\"'`]{4,64}?)(?=[.!?;,]?(?:[ \t]*$|\n)|[.!?;,]\s))"
)
URL_CREDENTIALS = re.compile(r"://[^\s:/@]{0,64}:(?P<pw>[^\s:/@]{1,128})@")  # scheme://user:pw@host
_IDENTIFIER_TAIL = re.compile(r"[\w.-]{1,40}$")
_IDENTIFIER_HEAD = re.compile(r"[\w.-]{1,60}")
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")  # splits snake_case, kebab and camelCase

PASSWORD_WORDS = {"password", "passwd", "pwd", "passphrase", "passcode"}
_SECRET_WORDS = PASSWORD_WORDS | {
    "secret", "secrets", "token", "credential", "credentials", "auth", "authorization", "bearer",
    "apikey", "secretkey", "accesskey", "privatekey", "authtoken", "accesstoken", "refreshtoken",
}  # fmt: skip
# "key" alone is a dict/cache/primary key; it is secret-ish only when qualified, e.g. api_key.
_KEY_QUALIFIERS = {
    "api", "access", "secret", "private", "signing", "encryption", "master", "client", "license",
    "service", "app", "account", "admin", "auth", "session", "webhook",
}  # fmt: skip
# Words that make a name about a secret rather than the secret itself (or not secret at all).
_NOT_SECRET_WORDS = {
    "public", "pub", "id", "ids", "uuid", "guid", "hash", "hashed", "sha", "md5", "digest", "checksum",
    "name", "type", "url", "uri", "path", "file", "dir", "count", "length", "len", "limit", "max",
    "min", "size", "expiry", "expires", "exp", "ttl", "timeout", "model", "field", "prefix", "format",
    "header", "endpoint", "version", "usage", "label", "hint", "regex", "pattern", "policy", "env",
    "var", "arn", "region", "fingerprint", "kid", "example", "placeholder", "sample",
}  # fmt: skip
_PLACEHOLDER_MARKS = (
    "your", "example", "placeholder", "changeme", "change_me", "redacted", "dummy", "sample", "xxx",
    "***", "...", "\u2026", "insert", "replace",
)  # fmt: skip
# A password literal naming itself ("password123", "mysecret", "test1234") is a documentation stand-in.
_PASSWORD_PLACEHOLDERS = _PLACEHOLDER_MARKS + ("password", "passwd", "secret", "here", "test", "fake", "todo")
_NOT_LITERAL_START = tuple("$%{[(<*!?:@&\\")  # ${VAR} $(cmd) %s {{tpl}} <your..> **** :bind @file
_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
_SLUG = re.compile(r"(?:[A-Za-z][a-z]*|[A-Z]+|\d+)(?:[-_./](?:[A-Za-z][a-z]*|[A-Z]+|\d+))+")
_WORDISH = re.compile(r"[A-Z]?[a-z]{3,}")
_WORDS_JOINED = re.compile(r"[A-Za-z]+(?:[-_.][A-Za-z]+)+")
_TRAILING_PUNCT = ")]}>:;,.!?"  # closes a call or a sentence, not part of an unquoted value
_SPACE = re.compile(r"\s")
_SECRET_CHARS = re.compile(r"[\w+/=.~-]+")
_QUOTED_SECRET_CHARS = re.compile(r"[!-~]+")  # printable ASCII, no spaces

# --- personal numbers: boundaries are checked in code so each regex can start at a digit or dash ---
CARD_NUMBER = re.compile(
    r"[0-9](?:[0-9]{12,18}"
    r"|[0-9]{3}(?P<s>[ -])[0-9]{4}(?P=s)[0-9]{4}(?P=s)[0-9]{1,4}(?:(?P=s)[0-9]{1,3})?"  # 4-4-4-4(-3)
    r"|[0-9]{3}(?P<a>[ -])[0-9]{6}(?P=a)[0-9]{4,5})"  # Amex 4-6-5, Diners 4-6-4
    r"(?![\w.+/-]|[ -][0-9])"
)
SSN_TAIL = re.compile(r"-(?!00)[0-9]{2}-(?!0000)[0-9]{4}(?![\w+/-]|\.[0-9])")  # area digits checked in code
PIN = re.compile(
    r"\b(?:PIN|[Pp]in)(?:[ _\t]*(?i:code|number|no\.?|#))?"
    r"(?:[ \t]*(?i:is|was|=|:|-)[ \t]*:?[ \t]*|[ \t]+)[\"']?[0-9]{4,8}(?![\w.,:/-]?[0-9]|\w)"
)
# In India a "PIN code" (or "pincode") is the postal code: an address around it means it is no secret.
_POSTAL_CONTEXT = re.compile(
    r"\b(?:pincode|address|postal|post office|zip|city|district|state|india|delivery|street|road|area)\b"
)
# A number right after one of these words identifies something else, not a card or an SSN.
_OTHER_NUMBER_CONTEXT = re.compile(
    r"(?i)\b(?:order|tracking|invoice|isbn|phone|tel|fax|mobile|ref|reference|id|serial|imei|iccid|"
    r"confirmation|booking|ticket|transaction|txn|shipment|parcel|part|model|sku|account|routing|"
    r"iban|policy|case|claim|member|patient|employee|customer)\b[^\n]{0,12}$|#\s*$"
    r"|[(\[{,=*+/<>|^%]\s*$"  # code or maths: rng(348932549825235), [4220315081820346526, ...]
)
_CARD_CONTEXT = re.compile(
    r"(?i)(?<![a-z])(?:card|visa|mastercard|amex|credit|debit|cc|cvv|ssn|social)s?(?![a-z])"
)


def shannon_entropy(s: str) -> float:
    """Bits per character of `s` under its own character frequencies."""
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values()) if n else 0.0


def luhn_valid(digits: str) -> bool:
    doubled = (int(c) * (1 + i % 2) for i, c in enumerate(reversed(digits)))  # every second from the right
    return sum(d - 9 if d > 9 else d for d in doubled) % 10 == 0


def _issuer_known(d: str) -> bool:
    """Card-network prefix/length table: rules out timestamps (19xx/20xx), ids starting 0/1/7-9..."""
    n, p2, p4 = len(d), int(d[:2]), int(d[:4])
    if d[0] == "4":
        return n in (13, 16, 19)  # Visa
    if 51 <= p2 <= 55 or 2221 <= p4 <= 2720:
        return n == 16  # Mastercard
    if p2 in (34, 37):
        return n == 15  # Amex
    if 2200 <= p4 <= 2204 or p2 in (36, 38, 39) or 300 <= int(d[:3]) <= 305:
        return 14 <= n <= 19  # Mir, Diners
    if 3528 <= p4 <= 3589 or p2 in (50, 56, 57, 58, 60, 62, 63, 64, 65, 67):
        return 16 <= n <= 19  # JCB, Maestro, Discover, UnionPay
    return False


# A generic secret must look machine-made. Measured per-char Shannon entropy of random strings
# (mean / 0.1th percentile): base62 20 chars 4.0 / 3.5, 32 chars 4.6 / 4.1; hex 24 chars 3.5 / 2.9,
# 32 chars 3.6 / 3.1. A threshold of 3.0 keeps practically every base62 key and 32-hex key while
# rejecting repetitive stand-ins ("aaaa1111bbbb2222cccc", "abcabc123123..."). Word-made names score
# 3.4-3.9 too ("user_profile_settings_2024_v2": 3.9), so the slug/word checks, not entropy, reject those.
SECRET_MIN_LEN = 20
SECRET_MIN_ENTROPY = 3.0


def _looks_random(v: str, quoted: bool = False) -> bool:
    low = v.lower()
    # Unquoted, a value is one token of key characters; quoted it may hold any printable symbol
    # (Django's SECRET_KEY = "django-insecure-k#3$...") but not a template or variable reference.
    chars_ok = _QUOTED_SECRET_CHARS.fullmatch(v) and not v.startswith(_NOT_LITERAL_START)
    if len(v) < SECRET_MIN_LEN or not (chars_ok if quoted else _SECRET_CHARS.fullmatch(v)):
        return False
    if not (re.search(r"[A-Za-z]", v) and re.search(r"[0-9]", v)):
        return False  # mixed classes: words and pure numbers are not keys
    if any(w in low for w in _PLACEHOLDER_MARKS) or "://" in v or v.startswith(("/", "./", "~/")):
        return False
    if _UUID.fullmatch(v) or _SLUG.fullmatch(v):
        return False  # UUIDs identify things; slugs and dotted paths are names
    if sum(len(w) for w in _WORDISH.findall(v)) >= 0.5 * len(v):
        return False  # mostly dictionary-looking runs: a variable or config name
    return shannon_entropy(v) >= SECRET_MIN_ENTROPY


def _is_password_literal(v: str, quoted: bool) -> bool:
    """A concrete password, not a variable, type annotation, env lookup, mask or placeholder."""
    if not 4 <= len(v) <= 128 or len(set(v)) < 3 or _SPACE.search(v):
        return False  # spaces: a validation message such as "Password must be 8+ chars"
    if v.startswith(_NOT_LITERAL_START) or v.startswith(("/", "./", "~/")) or re.match(r"[A-Za-z]:\\", v):
        return False
    if any(w in v.lower() for w in _PASSWORD_PLACEHOLDERS):
        return False
    if not quoted and (re.search(r"[()\[\]{}]", v) or re.fullmatch(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+", v)):
        return False  # a call, subscript or attribute: getpass(), os.environ[...], self.password
    # Words, even CamelCase or kebab-joined, are variables, types, constants or prose (None, str,
    # HiddenText, "IAmSensitive", "foo-bar"); a password literal worth hiding has a digit or symbol.
    return bool(re.search(r"[^A-Za-z_]", v)) and not _WORDS_JOINED.fullmatch(v)


def _positions(low: str, words: tuple[str, ...]):
    for word in words:
        i = low.find(word)
        while i != -1:
            yield i, word
            i = low.find(word, i + 1)


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


def _assignment_shapes(text: str, low: str) -> set[str]:
    found: set[str] = set()
    last_end = -1
    for i, word in sorted(_positions(low, ASSIGNMENT_KEYWORDS)):
        # Skip a keyword inside the last assignment (its name, e.g. "key" in "secret_key", or value).
        m = ASSIGNMENT.match(text, i + len(word)) if i >= last_end else None
        if not m:
            continue
        last_end = m.end()
        quoted = m.group("quoted") is not None
        value = m.group("quoted") if quoted else m.group("bare").rstrip(_TRAILING_PUNCT)
        if len(value) < 4:  # too short for any rule below; skip the name analysis
            continue
        words = _identifier_words(text, i)
        if words and words[-1] in PASSWORD_WORDS and _is_password_literal(value, quoted):
            found.add("password")
        elif _is_secret_name(words) and _looks_random(value, quoted):
            found.add("secret_assignment")
    for i, _ in _positions(low, ("pass",)):
        m = PASSWORD_STATEMENT.match(text, i)
        if m and _is_password_literal(m["quoted"] or m["bare"].rstrip(_TRAILING_PUNCT), bool(m["quoted"])):
            found.add("password")
    if "://" in text and any(_is_password_literal(m["pw"], False) for m in URL_CREDENTIALS.finditer(text)):
        found.add("password")
    return found


def _has_api_key(text: str) -> bool:
    for m in API_KEY.finditer(text):
        body = m.group("body")
        classes = sum(bool(re.search(c, body)) for c in ("[a-z]", "[A-Z]", "[0-9]"))
        # Two character classes, not a hyphenated phrase ("sk-learn-Compatible-API"), and >= 3.0
        # bits/char (rules out "sk-xxxx...", "sk-1111..."); real bodies are random base62 (~4+).
        if classes >= 2 and not _SLUG.fullmatch(body) and shannon_entropy(body) >= 3.0:
            return True
    return False


def _other_number(text: str, start: int) -> bool:
    """The number at `start` continues another token, or follows a word saying what else it is."""
    prev, prev2 = text[start - 1 : start] or " ", text[max(start - 2, 0) : max(start - 1, 0)] or " "
    if prev.isalnum() or prev in "_.+/-" or (prev in " -" and prev2.isdigit()):
        return True
    before = text[max(0, start - 40) : start]
    return bool(_OTHER_NUMBER_CONTEXT.search(before)) and not _CARD_CONTEXT.search(before)


def _has_card(text: str) -> bool:
    for m in CARD_NUMBER.finditer(text):
        d = re.sub(r"[^0-9]", "", m.group())
        if _issuer_known(d) and luhn_valid(d) and not _other_number(text, m.start()):
            return True
    return False


def _has_ssn(text: str) -> bool:
    for m in SSN_TAIL.finditer(text):
        s = m.start() - 3
        area = text[max(s, 0) : m.start()]  # 000, 666 and 900-999 are never issued
        if s >= 0 and area.isdigit() and area not in ("000", "666") and area < "900":
            if not _other_number(text, s):
                return True
    return False


def _has_private_key(text: str) -> bool:
    return any(_PEM_BODY.search(text, m.end(), m.end() + 400) for m in PRIVATE_KEY.finditer(text))


def _has_pin(text: str, low: str) -> bool:
    for i, _ in _positions(low, ("pin",)):  # "pin" is also in spinach, opinion...: match only there
        m = PIN.match(text, i)
        if m and not _POSTAL_CONTEXT.search(low, max(0, i - 80), m.end() + 80):
            return True
    return False


def _has_bearer(text: str, low: str) -> bool:
    for i, _ in _positions(low, ("bearer", "basic")):
        m = BEARER.match(text, i)
        if m and _looks_random(m[1]):
            return True
    return False


# C-speed gates (bytes.translate + substring tests, ~2 us/kB) so costlier regexes run only on texts
# that could match. The shape maps UTF-8 bytes: digit -> "0", whitespace -> " ", "-" kept, other -> "x".
_SHAPE = bytes(
    48 if 48 <= b <= 57 else 32 if b in b" \t\n\r\f\v" else 45 if b == 45 else 120 for b in range(256)
)
_NON_SPACE = bytes(32 if b == 32 else 120 for b in range(256))  # applied to a shape: token bytes -> "x"
_LONG_TOKEN = b"x" * 20  # every key/token/secret shape is a run of >= 20 non-space chars
_CARD_SHAPES = (b"0" * 13, b"0000 0000 0000 0", b"0000-0000-0000-0", b"0000 000000 0000", b"0000-000000-0000")


def screen(text: str) -> Screen:
    low = text.replace("\u0130", "i").lower()  # "İ" is the one char whose lower() is 2 long: keep offsets
    shape = text.encode("utf-8", "surrogatepass").translate(_SHAPE)
    long_token = _LONG_TOKEN in shape.translate(_NON_SPACE)
    checks = (
        ("api_key", long_token and any(p in text for p in _API_KEY_LITERALS) and _has_api_key(text)),
        ("jwt", long_token and "eyj" in low and JWT.search(text) is not None),
        ("private_key", "private key" in low and _has_private_key(text)),
        ("bearer_token", long_token and ("bearer" in low or "basic" in low) and _has_bearer(text, low)),
        ("card_number", any(g in shape for g in _CARD_SHAPES) and _has_card(text)),
        ("ssn", b"000-00-0000" in shape and _has_ssn(text)),
        ("pin", "pin" in low and _has_pin(text, low)),
    )
    shapes = [name for name, hit in checks if hit]
    shapes += sorted(_assignment_shapes(text, low) - set(shapes))
    return Screen(HIGH, tuple(shapes)) if shapes else Screen(NONE, ())


def is_high(text: str) -> bool:
    return screen(text).level == HIGH


_TOKEN_REST = re.compile(r"\S{0,200}")


def excerpt_is_high(text: str, shown_chars: int) -> bool:
    """True when the part of `text` an excerpt shows (its first `shown_chars` characters) or the
    1,024 characters past them read as high. Used to blank listing excerpts."""
    end = max(shown_chars, 0) + EXCERPT_LOOKAHEAD
    # Finish the token cut at the window edge (<= 200 chars): a clipped key or number could both
    # hide a secret and fake one (a 20-digit id cut to a Luhn-valid 16).
    stop = _TOKEN_REST.match(text, end).end() if end < len(text) else end
    return is_high(text[:stop])
