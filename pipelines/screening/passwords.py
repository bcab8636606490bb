"""Whether a value stated as a password is one, for the statement rules of `pipelines.screening`:
a literal (not a variable, type, env lookup, mask or placeholder), a plain word or words stated in
prose (none of the words prose puts after "password is": "incorrect", "required", "the same"), and
whether the statement is prose or a config line rather than code."""

from __future__ import annotations

import re

from pipelines.screening.tables import table

_DATA = table("passwords")  # the word lists
OPEN_QUOTE, CLOSE_QUOTE = "\"'`\u201c\u2018\u00ab", "\"'`\u201d\u2019\u00bb"
ADJECTIVE_COMPOUND = re.compile(r".*[0-9].*-[a-z]{3,}")  # "SHA256-hashed", "AES256-encrypted"
UNIT = re.compile(r"(?i)\d+\+?(?:[a-z]{1,5}|\d*[.,]\d+)|v?\d+(?:\.\w+)+")  # "12chars", "2fa", "v1.2.3"
PLACEHOLDER_MARKS = tuple(_DATA["placeholder_marks"])
# A password literal naming itself ("password123", "mysecret", "test1234") is a documentation stand-in.
PASSWORD_PLACEHOLDERS = PLACEHOLDER_MARKS + ("password", "passwd", "secret", "here", "test", "fake", "todo")
NOT_LITERAL_START = tuple("$%{[(<*!?:@&\\")  # ${VAR} $(cmd) %s {{tpl}} <your..> **** :bind @file
_WORDS_JOINED = re.compile(r"[A-Za-z]+(?:[-_.][A-Za-z]+)+")
# "password: SHA-256" names how a password is kept, not the password.
_ALGORITHM = re.compile(
    r"(?i)(?:sha|aes|rsa|hmac|pbkdf|argon|utf|base)[-_]?\d+(?:[-_]\w+)*|md[245]|ed25519|x509|3des"
)
TRAILING_PUNCT = ")]}>:;,.!?"  # closes a call or a sentence, not part of an unquoted value
_SPACE = re.compile(r"\s")


def is_password_literal(v: str, quoted: bool) -> bool:
    """A concrete password, not a variable, type annotation, env lookup, mask or placeholder."""
    if not 4 <= len(v) <= 128 or len(set(v)) < 3 or _SPACE.search(v):
        return False  # spaces: a validation message such as "Password must be 8+ chars"
    if v.startswith(NOT_LITERAL_START) or v.startswith(("/", "./", "~/")) or re.match(r"[A-Za-z]:\\", v):
        return False
    if "://" in v or v.lower().startswith("www."):
        return False  # a link: "the password reset page is https://..."
    if any(w in v.lower() for w in PASSWORD_PLACEHOLDERS) or _ALGORITHM.fullmatch(v):
        return False
    if not quoted and (re.search(r"[()\[\]{}]", v) or re.fullmatch(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+", v)):
        return False  # a call, subscript or attribute: getpass(), os.environ[...], self.password
    # Words, even CamelCase or kebab-joined, are variables, types, constants or prose (None, str,
    # HiddenText, "IAmSensitive", "foo-bar"); a password literal worth hiding has a digit or symbol
    # (a letter of any alphabet is no symbol: "obrigat\u00f3ria" is a word).
    return any(not (c.isalpha() or c == "_") for c in v) and not _WORDS_JOINED.fullmatch(v)


# --- a password of plain words, told in prose: "my password is sunflower", "the wifi passwd: tangerine"
# A letters-only word is a password only where prose states one (not code comparing or passing a
# variable) and only when it is none of the words prose puts there instead: a judgement
# ("incorrect", "weak"), a state ("expired", "required"), a pronoun or article ("the", "mine"), a
# type or value of code ("str", "None"), a heading ("Password: Requirements") or a default that
# documentation and docker files show ("changeme", "postgres", "admin": stand-ins, not secrets).
FUNCTION_WORDS = set(_DATA["function_words"])
NOT_PASSWORD_WORDS = FUNCTION_WORDS | set(_DATA["not_password_words"])
# Participles, adjectives and adverbs by their ending: "compromised", "expiring", "guessable",
# "case-sensitive", "useless", "completely" (lengths keep "olive", "thing" and "butterfly" as words).
DESCRIPTIVE = re.compile(
    r"[a-z]{3,}ed|[a-z]{3,}ing|[a-z]{2,}[ai]ble|[a-z]{3,}ive|[a-z]{3,}ous|[a-z]{3,}ful|[a-z]{3,}less"
    r"|[a-z]{2,}(?:al|e|t|b|i|ss|n|r)ly|[a-z]{2,}ical"
)
# Words (lower, Capitalised or upper case), maybe hyphen-joined: "sunflower", "maple-syrup"; not a
# camelCase or snake_case name, which in code is a variable ("hashedPassword", "user_pw").
_WORD_VALUE = re.compile(r"(?:[a-z]+|[A-Z][a-z]+|[A-Z]+)(?:-(?:[a-z]+|[A-Z][a-z]+|[A-Z]+)){0,5}")
# A line of code, not prose: a keyword opening it, or an operator before the password word.
CODE_LINE = re.compile(
    r"(?:if|elif|while|assert|return|def|fn|func|function|let|const|var|val|case|when|unless|and|or|not|"
    r"raise|throw|await|lambda|print|console|log)\b|.*(?:==|!=|&&|\|\||=>)"
)
# "if the password is ...", "when no password is ...", "no username or password is ...": a condition
# or a rule governing the clause (no comma between), not a statement of the value.
CONDITION_BEFORE = re.compile(
    r"(?i)\b(?:if|when|whenever|unless|whether|until|once|any|every|each)\b[^.!?,;:\n]{0,40}$"
    r"|\bno[ \t]+(?:[\w'-]+[ \t]+){0,3}$"
)

# Stand-ins ("your", "example", "changeme") and names of a variable holding it ("mypass", "hashpw").
_NOT_WORD_PARTS = (
    *(w for w in PASSWORD_PLACEHOLDERS if w.isalpha()),
    "pass",
    "pwd",
    "hash",
    "cred",
    "token",
)


def is_word_password(v: str) -> bool:
    """A plain word or hyphen-joined words stated as a password ("sunflower", "maple-syrup",
    "otter-nine-lamp": a number spelled out among two or more words)."""
    if not 4 <= len(v) <= 40 or not _WORD_VALUE.fullmatch(v):
        return False
    low = v.lower()
    parts = [w for w in low.split("-") if not is_number_word(w)]
    if len(parts) < 2 or len(parts) * 2 < low.count("-") + 1:
        parts = low.split("-")  # "one-time": a number word counts as a word there
    if any(w in NOT_PASSWORD_WORDS or DESCRIPTIVE.fullmatch(w) for w in parts):
        return False
    return len(set(low)) >= 3 and not any(w in low for w in _NOT_WORD_PARTS)


def is_quoted_phrase(v: str) -> bool:
    """Plain words given in quotes as a password ("is 'purple elephant'"): the quotes bound the
    value; a description ("'the one I always use'") holds a function or placeholder word."""
    words = [w.strip(".,!?").lower() for w in v.split()]
    return (
        2 <= len(words) <= 8
        and len(v) <= 80
        and all(
            w and w not in NOT_PASSWORD_WORDS and not any(p in w for p in PASSWORD_PLACEHOLDERS)
            for w in words
        )
    )


def stated_in_prose(text: str, i: int, m: re.Match[str]) -> bool:
    """The password statement at `i` is prose or a config line ("Password: sunflower",
    "--password=letmein"), not code comparing or passing a variable ("if self.password is sentinel:",
    "DB_PASSWORD: postgres", "login(user, pwd=secret)", "password = fallback")."""
    if i and text[i - 1] in "._$>@:":
        return False  # part of a longer name: self.password, DB_PASSWORD, $password, obj->password
    start = text.rfind("\n", 0, i) + 1
    line = text[start:i].lstrip(" \t-*>#\u2022")
    if CODE_LINE.match(line) or line.count("(") > line.count(")"):
        return False  # a condition, a declaration, or an argument of a call
    if m["sep"] == "=" and text[m.start("sep") - 1] in " \t":
        return False  # "password = fallback" assigns a variable
    if CONDITION_BEFORE.search(text, max(0, i - 50), i):
        return False
    bare = m["bare"] or ""
    if bare.endswith(":") or "{" in line:
        return False  # "if password is sentinel:" opens a block; "{ user, password: pw }" is code
    # "  password: candidate," ending its line is a member of an object literal, not a statement
    member = m["sep"] == ":" and bare.endswith(",") and text[m.end("bare") : m.end("bare") + 1] in ("", "\n")
    return not member


_NUMBER_WORDS = set(_DATA["number_words"])


def is_number_word(w: str) -> bool:
    """A number spelled out: "seven", "Forty-Two"."""
    return all(p in _NUMBER_WORDS for p in w.lower().split("-"))
