"""Secrets stated in words or assigned in code: a password told in a sentence ("the password is
…"), a secret named and given ("the deploy token: …"), and an assignment of a literal to a secret-ish
name (``api_key = "…"``), each judged so that variables, types, env lookups and placeholders are not
secrets. One family of the shapes ``pipelines.screening`` checks; pure stdlib, like it."""

from __future__ import annotations

import re

from pipelines.secret_formats import shannon_entropy, word_coverage

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


SECRET_MIN_LEN = 20
SECRET_MIN_ENTROPY = 3.0


def looks_random(v: str, quoted: bool = False) -> bool:
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


def positions(low: str, words: tuple[str, ...]):
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
        elif _is_secret_name(words) and looks_random(value, quoted):
            found.add("secret_assignment")
    return found


def assignment_shapes(text: str, low: str) -> set[str]:
    found: set[str] = set()
    pass_pw = list(positions(low, ("pass", "pw")))  # shared with the prose rule below
    if ":" in text or "=" in text:  # every assignment has one; over half of all chat turns have neither
        keywords = [*positions(low, ASSIGNMENT_KEYWORDS), *((i, "pass") for i, w in pass_pw if w == "pass")]
        keywords += [(i, "pwd") for i, w in pass_pw if w == "pw" and low.startswith("pwd", i)]
        found |= _assigned(text, sorted(keywords))
    extra = _PASSWORD_LITERALS if low.isascii() else _PASSWORD_LITERALS + _PASSWORD_LITERALS_NON_ASCII
    if any(_is_password_statement(text, low, i) for i, _ in [*pass_pw, *positions(low, extra)]):
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
