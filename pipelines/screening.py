"""Sensitivity screening: does a turn's text hold a *high* shape (a secret or a personal number)?

A high turn is stored as written but never embedded, never sent to a model and never returned by
search. A false positive silently hides an ordinary turn, so each shape is paired with checks that
keep precision: provider prefixes need random-looking bodies, assignments must assign a literal
(not a variable, type, env lookup or placeholder), card numbers need an issuer prefix and Luhn, etc.

Pure stdlib and fast, since it runs inline on every write (~0.1-0.4 ms per 10 kB): each check is
gated by substring tests at C speed, keyword rules match only where the keyword occurs, and every
repeat is bounded or possessive with nothing nested, so there is no catastrophic backtracking.

Rules run on a normalised copy (NFKC, invisible characters removed, Unicode spaces made plain), so
fullwidth letters, zero-width joiners or no-break spaces do not hide a secret. Provider token
formats, private-key bodies, Basic credentials, cards and SSNs live in `pipelines.secret_formats`.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from pipelines.secret_formats import (
    aws_secret_positions,
    has_basic_credentials,
    has_card,
    has_pem_body,
    has_provider_token,
    has_ssn,
    shannon_entropy,
    word_coverage,
)

HIGH = "high"
NONE = "none"
# Raise it with any change that makes some text read differently: the re-screening stage then
# judges every turn screened by an older version again (`loom screening rescreen`, and the
# scheduler's rescreen pass).
RULES_VERSION = 1
EXCERPT_LOOKAHEAD = 1024  # chars past the shown part of an excerpt that are screened too


@dataclass(frozen=True)
class Screen:
    level: str  # HIGH or NONE
    shapes: tuple[str, ...] = ()  # names of the shapes found, empty when NONE


# --- tokens: provider formats are in pipelines.secret_formats; these are the generic shapes -------
JWT = re.compile(r"eyJ(?<![\w-]eyJ)[\w-]{8,}+\.eyJ[\w-]{8,}+\.[\w-]{16}")  # header.payload.signature
PRIVATE_KEY = re.compile(r"-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----")
_PEM_BODY = re.compile(r"[A-Za-z0-9+/]{40,}")  # a real block has base64 lines; "..." does not
BEARER = re.compile(r"\b(?:[Bb]earer|Basic)[ \t]+([\w.~+/-]{20,300}+=*+)(?![\w.~+/-])")

# --- assignments: matched right after a secret-ish word; the whole identifier is judged in code ---
ASSIGNMENT_KEYWORDS = ("key", "secret", "token", "credential", "auth", "bearer")  # and "pass", "pwd"
ASSIGNMENT = re.compile(  # continues after the keyword: rest of the name, separator, value
    r"[\w.-]{0,40}+[\"']?[ \t]{0,3}(?::=|=>|==|=|:)[ \t]{0,3}"
    r"(?:[rbuf]{0,2}([\"'`])(?P<quoted>[^\"'`\n]{0,200})\1|(?P<bare>[^\s\"'`,;]{1,200}))"
)
# "my password is Tr0ub4dor&3.", "the wifi pw: Xk29aPq7", "Passwort ist Sommer2024!": a word for
# password (singular: "bad passwords: 123456, qwerty" lists examples), maybe what it is for, a
# separator or a copula, and one token (judged in code).
_PASSWORD_WORD = (
    r"pass(?:[ -]?(?:word|code|phrase)|wort|wd|ord)?|pw(?:or)?d|pw|ps?sw(?:r?d)?|p/w"
    r"|kennwort|contrase(?:\u00f1|n)a|mot de passe|senha|wachtwoord|l(?:\u00f6|o)senord|has(?:\u0142|l)o"
    r"|\u043f\u0430\u0440\u043e\u043b\u044c"
)
_OPEN_QUOTE, _CLOSE_QUOTE = "\"'`\u201c\u2018\u00ab", "\"'`\u201d\u2019\u00bb"
PASSWORD_STATEMENT = re.compile(
    rf"(?i)(?P<word>{_PASSWORD_WORD})\b"
    r"(?P<about>[ \t]+(?:for|to|of|on|at|f\u00fcr|zum|de|del|du|da|do|van|voor|i|we|you|they|that)"
    r"(?:[ \t]+[\w.@'-]{1,30}){1,3}?)?"  # "for the guest wifi", "I use"
    r"(?:[ \t]*(?P<sep>[:=]|-{1,2}>?|\u2192)|['\u2019]s\b"
    r"|[ \t]+(?:is|was|ist|war|es|est|era|\u00e9|\u00e4r|er|je|jest)\b(?:[ \t]*:)?)[ \t]*"
    rf"(?:[{_OPEN_QUOTE}](?P<quoted>[^\s{_CLOSE_QUOTE}]{{3,64}})[{_CLOSE_QUOTE}]"
    r"|(?P<bare>[^\s\"'`]{3,64}+))"
    r"(?P<after>[ \t]*(?:\n|$|\(|[-\u2013\u2014][ \t]|(?:and|but|or|so|for|on|to|please|pls|if)\b))?"
)
# "pass" and "pw" mean many things ("boarding pass", "a first pass"): a password only after these.
_PASS_QUALIFIERS = {
    "my", "our", "the", "your", "wifi", "wi-fi", "wlan", "router", "network", "login", "email", "mail",
    "account", "admin", "root", "user", "db", "database", "server", "ssh", "vpn", "default", "guest",
    "master", "sudo", "ftp", "smtp", "imap", "app", "portal", "laptop", "computer", "phone", "device",
}  # fmt: skip
_PREVIOUS_WORD = re.compile(r"(?:^|(?<=\s))([\w-]*)[ \t]*$")
_CREDENTIAL_LINE = re.compile(
    r"(?i)\b(?:user(?:name)?|login|e-?mail|account|ssid|host)\b"
)  # "user: bob, pw: x"
_ADJECTIVE_COMPOUND = re.compile(r".*[0-9].*-[a-z]{3,}")  # "SHA256-hashed", "AES256-encrypted"

# "my mailchimp auth token is 3f2a...", "api key 9c1e...": a secret named in prose, then a value.
_SECRET_NOUNS = ("token", "key", "secret", "credential", "creds", "auth")
_WORDS_BEFORE = re.compile(r"(?:[\w'.-]{1,30}[:=]?[ \t]+){0,3}[\w.-]{0,40}$")  # up to 3 words, same clause
SECRET_STATEMENT = re.compile(
    r"[A-Za-z]{0,12}(?P<about>(?:[ \t]+[\w.@'-]{1,30}){0,4}?)"
    r"(?:[ \t]*(?P<sep>[:=\u2014\u2013]|->|-)|[ \t]+(?P<verb>is|was|are|here)\b(?:[ \t]*:)?|(?=[ \t]))"
    r"[ \t]*[\"'`]?(?P<value>[\w+/=.~-]{20,200}+)"
)
# Words saying a hex or base64 value is a hash, an id or an address, not a credential.
_NOT_CREDENTIAL_WORDS = {
    "commit", "sha1", "sha256", "sha512", "revision", "rev", "etag", "trace", "request", "transaction",
    "tx", "txn", "order", "tracking", "address", "contract", "wallet", "block", "image", "build",
    "cache", "object", "blob", "tree", "signature", "checksums", "hashes",
}  # fmt: skip
URL_CREDENTIALS = re.compile(r"://[^\s:/@]{0,64}:(?P<pw>[^\s:/@]{1,128})@")  # scheme://user:pw@host
_IDENTIFIER_TAIL = re.compile(r"[\w.-]{1,40}$")
_IDENTIFIER_HEAD = re.compile(r"[\w.-]{1,60}")
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")  # splits snake_case, kebab and camelCase

PASSWORD_WORDS = {"password", "passwd", "pwd", "passphrase", "passcode", "passwort", "kennwort", "passord"}
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
_WORDS_JOINED = re.compile(r"[A-Za-z]+(?:[-_.][A-Za-z]+)+")
# "password: SHA-256" names how a password is kept, not the password.
_ALGORITHM = re.compile(
    r"(?i)(?:sha|aes|rsa|hmac|pbkdf|argon|utf|base)[-_]?\d+(?:[-_]\w+)*|md[245]|ed25519|x509|3des"
)
_TRAILING_PUNCT = ")]}>:;,.!?"  # closes a call or a sentence, not part of an unquoted value
_SPACE = re.compile(r"\s")
_SECRET_CHARS = re.compile(r"[\w+/=.~-]+")
_QUOTED_SECRET_CHARS = re.compile(r"[!-~]+")  # printable ASCII, no spaces

# --- personal numbers: cards and SSNs are in pipelines.secret_formats; PINs need the words around
PIN = re.compile(
    r"\b(?:PIN|[Pp]in)(?P<noun>[ _\t]*(?i:code|number|no\.?|#))?"
    r"(?:[ \t]*(?P<sep>(?i:is|was|=|:|-))[ \t]*:?[ \t]*|[ \t]+)"
    r"[\"']?(?P<num>[0-9]{4,8})(?![\w.,:/-]?[0-9]|\w)"
)
# "pin 2048 hugepages", "we pin 4096 pages": "pin" is also a verb. Without a separator, a lower-case
# "pin" is read as a PIN only when the number ends the clause and no pronoun or modal comes before.
_PIN_CLAUSE_END = re.compile(r"[\"']?[.!?;,)]*(?:[ \t]*(?:\n|$)|[ \t]+[(\u2013\u2014-])|[\"']?[.!?;,)]+[ \t]")
_PIN_VERB_BEFORE = re.compile(
    r"(?i)\b(?:i|we|you|they|he|she|it|to|can|could|should|would|will|must|may|might|please|then|and|"
    r"or|just|also|let's|lets|don't|dont|always|never)[ \t]+$"
)
# In India a "PIN code" (or "pincode") is the postal code: an address around it means it is no secret.
_POSTAL_CONTEXT = re.compile(
    r"\b(?:pincode|address|postal|post office|zip|city|district|state|india|delivery|street|road|area"
    r"|nagar|colony|sector|taluk|tehsil|village|mumbai|delhi|bangalore|bengaluru|chennai|kolkata"
    r"|hyderabad|pune|ahmedabad|jaipur|lucknow|kochi|noida|gurgaon|gurugram|karnataka|maharashtra"
    r"|tamil nadu|kerala|gujarat|rajasthan|telangana|punjab|bihar|odisha|uttar pradesh|west bengal)\b"
)
# "pin: 2048 hugepages", "pin 4096 MB": a count of something pinned, not a PIN.
_QUANTITY_AFTER = re.compile(
    r"(?i)[ \t]*(?:[kmgt]i?b|bytes?|(?:huge)?pages?|cpus?|cores?|threads?|workers?|[mg]hz|rpm|ms|px|mm)\b"
)
_PLACE_AFTER = re.compile(r"[ \t]*[,-]?[ \t]*[A-Z][a-z]{2,}")  # "PIN code 560001 Bangalore"
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
    if not re.search(r"[A-Za-z]", v):
        return False  # a number is no key
    if not re.search(r"[0-9]", v) and not (
        re.search(r"[a-z]", v)
        and re.search(r"[A-Z]", v)
        and word_coverage(v) < 0.4
        and shannon_entropy(v) >= 3.5
    ):
        return False  # letters only: a key mixes both cases at random ("kQpZrXwT..."), a name has words
    if any(w in low for w in _PLACEHOLDER_MARKS) or "://" in v or v.startswith(("/", "./", "~/")):
        return False
    if _UUID.fullmatch(v) or _SLUG.fullmatch(v):
        return False  # UUIDs identify things; slugs and dotted paths are names
    if word_coverage(v) >= 0.5:
        return False  # mostly dictionary-looking runs: a variable or config name
    return shannon_entropy(v) >= SECRET_MIN_ENTROPY


def _is_password_literal(v: str, quoted: bool) -> bool:
    """A concrete password, not a variable, type annotation, env lookup, mask or placeholder."""
    if not 4 <= len(v) <= 128 or len(set(v)) < 3 or _SPACE.search(v):
        return False  # spaces: a validation message such as "Password must be 8+ chars"
    if v.startswith(_NOT_LITERAL_START) or v.startswith(("/", "./", "~/")) or re.match(r"[A-Za-z]:\\", v):
        return False
    if "://" in v or v.lower().startswith("www."):
        return False  # a link: "the password reset page is https://..."
    if any(w in v.lower() for w in _PASSWORD_PLACEHOLDERS) or _ALGORITHM.fullmatch(v):
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


def _assigned(text: str, keywords: list[tuple[int, str]]) -> set[str]:
    found: set[str] = set()
    last_end = -1
    for i, word in keywords:
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
    return found


def _assignment_shapes(text: str, low: str) -> set[str]:
    found: set[str] = set()
    pass_pw = list(_positions(low, ("pass", "pw")))  # shared with the prose rule below
    if ":" in text or "=" in text:  # every assignment has one; over half of all chat turns have neither
        keywords = [*_positions(low, ASSIGNMENT_KEYWORDS), *((i, "pass") for i, w in pass_pw if w == "pass")]
        keywords += [(i, "pwd") for i, w in pass_pw if w == "pw" and low.startswith("pwd", i)]
        found |= _assigned(text, sorted(keywords))
    extra = _PASSWORD_LITERALS if low.isascii() else _PASSWORD_LITERALS + _PASSWORD_LITERALS_NON_ASCII
    if any(_is_password_statement(text, low, i) for i, _ in [*pass_pw, *_positions(low, extra)]):
        found.add("password")
    if "://" in text and any(_is_password_literal(m["pw"], False) for m in URL_CREDENTIALS.finditer(text)):
        found.add("password")
    return found


# Where the prose rule is tried, besides "pass" and "pw" (password, passwd, Passwort, mot de passe...).
# Each literal is one more scan of every text, so words of languages written mostly with accents are
# looked for only in non-ASCII texts ("a senha \u00e9 ...", "das Kennwort f\u00fcr ...").
_PASSWORD_LITERALS = ("psw", "pssw", "p/w", "contrase")
_PASSWORD_LITERALS_NON_ASCII = (
    "kennwort", "senha", "wachtwoord", "losenord", "l\u00f6senord", "haslo", "has\u0142o",
    "\u043f\u0430\u0440\u043e\u043b\u044c",
)  # fmt: skip
_AMBIGUOUS_PASSWORD_WORDS = ("pass", "pw", "psw", "pssw", "p/w")


def _is_password_statement(text: str, low: str, i: int) -> bool:
    i -= 7 if low.startswith("mot de passe", i - 7) else 0
    m = PASSWORD_STATEMENT.match(text, i) if not (i and text[i - 1].isalnum()) else None
    if not m:
        return False
    quoted = m["quoted"] is not None
    value = m["quoted"] if quoted else m["bare"].rstrip(_TRAILING_PUNCT)
    if not quoted:
        clause_end = m["after"] is not None or value != m["bare"]
        if not (clause_end or m["sep"] in (":", "=")) or _ADJECTIVE_COMPOUND.fullmatch(value):
            return False  # after "is", a bare token must end the clause: "is stored hashed" is prose
    if not _is_password_literal(value, quoted):
        return False
    word = low[i : m.end("word")]
    if word not in _AMBIGUOUS_PASSWORD_WORDS:
        return True
    # "pass"/"pw": only after a qualifier ("the wifi pw is"), opening a line ("pw: ...") or on a line
    # naming a user ("login: bob, pass: ..."); not a test status ("PASS: build-42"), not code
    # ("pw = x*2"), and with letters and digits or symbols ("your pass is valid until 2025").
    line = text[text.rfind("\n", 0, i) + 1 : i].strip(" \t-*>#\u2022")
    prev = _PREVIOUS_WORD.search(text, max(0, i - 30), i)
    qualified = not line or _CREDENTIAL_LINE.search(line) or (prev and prev[1].lower() in _PASS_QUALIFIERS)
    mixed = re.search("[A-Za-z]", value) and re.search("[^A-Za-z]", value)
    code = m["sep"] == "=" and text[m.start("sep") - 1] in " \t"
    return bool(qualified and mixed and not code and not text.startswith("PASS", i))


def _has_secret_statement(text: str, low: str) -> bool:
    for i, noun in _positions(low, _SECRET_NOUNS):
        if i and low[i - 1].isalpha() and not low.startswith(("api", "auth", "access"), max(0, i - 6)):
            continue  # "monkey", "turkey"; but "apikey", "authtoken", "accesstoken"
        m = SECRET_STATEMENT.match(text, i + len(noun))
        if not m or (m["about"] and not (m["sep"] or m["verb"])):
            continue  # no separator, so "token refresh in commit 3f2a..." names no token value
        value = m["value"].rstrip(".,;:")
        if m["value"].endswith("..") or text.startswith("\u2026", m.end()):
            continue  # elided: "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9..."
        if not _looks_random(value) or re.fullmatch(r"0x[0-9a-fA-F]{40}", value):
            continue  # not a key, or a public blockchain address
        before = _WORDS_BEFORE.search(text, max(0, i - 80), i)
        name = (before.group() if before else "") + text[i : m.start("about")] + m["about"]
        words = [w.lower() for w in _WORDS.findall(name)]
        if _names_other_value(text, i) or any(
            w in _NOT_SECRET_WORDS or w in _NOT_CREDENTIAL_WORDS for w in words
        ):
            continue
        plural = {"tokens": "token", "keys": "key", "secrets": "secret", "creds": "credential"}
        if _is_secret_name([plural.get(w, w) for w in words]):
            return True
    return False


def _names_other_value(text: str, at: int) -> bool:
    """The words just before `at` (same clause) say the value there is an id or a hash."""
    before = _WORDS_BEFORE.search(text, max(0, at - 80), at)
    words = [w.lower() for w in _WORDS.findall(before.group() if before else "")]
    return any(w in _NOT_SECRET_WORDS or w in _NOT_CREDENTIAL_WORDS for w in words)


def _has_private_key(text: str, low: str, tokens: list[str]) -> bool:
    if "private" in low:
        if "private key" in low and any(
            _PEM_BODY.search(text, m.end(), m.end() + 400) for m in PRIVATE_KEY.finditer(text)
        ):
            return True
        if "private-lines" in low and "putty-user-key-file" in low:
            return True
    return bool(tokens) and has_pem_body(tokens)  # a body pasted without its BEGIN line


def _has_pin(text: str, low: str) -> bool:
    for i, _ in _positions(low, ("pin",)):  # "pin" is also in spinach, opinion...: match only there
        m = PIN.match(text, i)
        if not m or _POSTAL_CONTEXT.search(low, max(0, i - 80), m.end() + 80):
            continue
        if len(m["num"]) == 6 and m["num"][0] != "0" and _PLACE_AFTER.match(text, m.end()):
            continue  # a six-digit Indian postal PIN code followed by the town
        if _QUANTITY_AFTER.match(text, m.end()):
            continue
        if m["noun"] or m["sep"] or text.startswith("PIN", i):
            return True
        if _PIN_CLAUSE_END.match(text, m.end()) and not _PIN_VERB_BEFORE.search(text, max(0, i - 20), i):
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
_GLUED_SPACE = re.compile(r"(?<=\S)[\xa0\u2000-\u200a\u202f\u205f\u3000](?=\S)")  # a space inside a token


def normalise(text: str, glue: bool = False) -> str:
    """The text the rules read: NFKC (fullwidth and styled letters to ASCII), invisible characters
    removed, Unicode spaces and line breaks made plain (`glue`: such spaces inside a token removed).
    ASCII text is returned as is."""
    if text.isascii():
        return text
    if _SPECIAL.search(text):  # one scan; most non-ASCII text only holds accents, quotes or emoji
        text = _INVISIBLE.sub("", text)
        text = _GLUED_SPACE.sub("", text) if glue else text
        text = _ODD_SPACE.sub(" ", _LINE_BREAK.sub("\n", text))
    return unicodedata.normalize("NFKC", text)


def screen(text: str) -> Screen:
    shapes = _shapes(normalise(text))
    if not text.isascii() and _GLUED_SPACE.search(text):
        # "xoxb-1234\u00a05678...": a no-break or thin space may split a token to hide it; read it glued.
        shapes += [s for s in _shapes(normalise(text, glue=True)) if s not in shapes]
    return Screen(HIGH, tuple(shapes)) if shapes else Screen(NONE, ())


def _shapes(text: str) -> list[str]:
    low = text.replace("\u0130", "i").lower()  # "İ" is the one char whose lower() is 2 long: keep offsets
    shape = text.encode("utf-8", "surrogatepass").translate(_SHAPE)
    long_token = _LONG_TOKEN in shape.translate(_NON_SPACE)
    tokens = [t for t in text.split() if len(t) >= 20] if long_token else []
    basic = "basic" in low
    checks = (
        ("api_key", bool(tokens) and has_provider_token(tokens)),
        ("jwt", long_token and "eyj" in low and JWT.search(text) is not None),
        ("private_key", _has_private_key(text, low, tokens)),
        ("bearer_token", basic and has_basic_credentials(text, low)),
        ("bearer_token", long_token and (basic or "bearer" in low) and _has_bearer(text, low)),
        ("card_number", b"0000" in shape and any(g in shape for g in _CARD_SHAPES) and has_card(text)),
        ("ssn", b"000-00-0000" in shape and has_ssn(text)),
        ("pin", "pin" in low and _has_pin(text, low)),
    )
    shapes = list(dict.fromkeys(name for name, hit in checks if hit))
    shapes += sorted(_assignment_shapes(text, low) - set(shapes))
    if not shapes and tokens:  # last resorts, costlier and only for an otherwise clean text
        if _has_secret_statement(text, low):
            shapes.append("secret_assignment")
        elif any(not _names_other_value(text, at) for at in aws_secret_positions(text, tokens)):
            shapes.append("api_key")
    return shapes


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
