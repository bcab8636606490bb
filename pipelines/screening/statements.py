"""Secrets stated in words or assigned in code: a password told in a sentence ("the password is
…", "password maple-syrup-4471"; in prose of any characters: "my password is sunflower"), a secret
named and given ("the deploy token: …"), a wifi key ("the WPA key: goldfish"), a login pair ("login: bob /
hunter2x"), a security answer ("the security answer is fluffy"), and an assignment of a literal to
a secret-ish name (``api_key = "…"``), each judged so that variables, types, env lookups,
placeholders and the words prose puts after "password is" ("incorrect", "required", "the same")
are not secrets. One family of the shapes ``pipelines.screening`` checks; pure stdlib, like it."""

from __future__ import annotations

import re

from pipelines.screening.assignments import ASSIGNMENT_KEYWORDS, assigned
from pipelines.screening.passwords import (
    ADJECTIVE_COMPOUND,
    CLOSE_QUOTE,
    CODE_LINE,
    CONDITION_BEFORE,
    OPEN_QUOTE,
    TRAILING_PUNCT,
    UNIT,
    is_password_literal,
    is_quoted_phrase,
    is_word_password,
    stated_in_prose,
)
from pipelines.screening.tables import table
from pipelines.screening.text import positions

_DATA = table("statements")  # the word lists

# "my password is Tr0ub4dor&3.", "the wifi pw: Xk29aPq7", "Passwort ist Sommer2024!": a word for
# password (singular: "bad passwords: 123456, qwerty" lists examples), maybe what it is for, a
# separator or a copula, and one token (judged in code).
_PASSWORD_WORD = (
    r"pass(?:[ -]?(?:word|code|phrase)|wort|wd|ord)?|pw(?:or)?d|pw|ps?sw(?:r?d)?|p/w"
    r"|kennwort|contrase(?:\u00f1|n)a|mot de passe|senha|wachtwoord|l(?:\u00f6|o)senord|has(?:\u0142|l)o"
    r"|\u043f\u0430\u0440\u043e\u043b\u044c"
)
PASSWORD_STATEMENT = re.compile(
    rf"(?i)(?P<word>{_PASSWORD_WORD})\b"
    r"(?P<about>[ \t]+(?:for|to|of|on|at|f\u00fcr|zum|de|del|du|da|do|van|voor|i|we|you|they|that)"
    r"(?:[ \t]+[\w.@'-]{1,30}){1,3}?)?"  # "for the guest wifi", "I use"
    r"(?:[ \t]*(?P<sep>[:=]|-{1,2}>?|\u2192)|['\u2019]s\b"
    # "I changed my password to ...", "the password is set to ...": a verb of change is checked in code
    r"|[ \t]+(?P<to>(?:(?:is|was|got|been)[ \t]+)?(?:(?:set|changed|reset|updated)[ \t]+)?to)\b"
    r"|[ \t]+(?:is|was|ist|war|es|est|era|\u00e9|\u00e4r|er|je|jest)\b(?:[ \t]*:)?"
    r"(?:[ \t]+(?:now|still|just|simply|currently|actually|literally|always))?)[ \t]*"  # "is now ..."
    # Quoted: a token, or plain words ("is 'purple elephant'", judged by is_quoted_phrase).
    rf"(?:[{OPEN_QUOTE}](?P<quoted>[^\s{CLOSE_QUOTE}](?:[^\n\r\t{CLOSE_QUOTE}]{{2,79}}))[{CLOSE_QUOTE}]"
    r"|(?P<bare>[^\s\"'`]{3,64}+))"
    r"(?P<after>[ \t]*(?:\n|$|\(|[-\u2013\u2014][ \t]|(?:and|but|or|so|for|on|to|please|pls|if|now|today"
    r"|yesterday|tonight|last|this|earlier|recently|again|btw)\b))?"
)
_PASS_QUALIFIERS = set(_DATA["pass_qualifiers"])
_PREVIOUS_WORD = re.compile(r"(?:^|(?<=\s))([\w-]*)[ \t]*$")
_CREDENTIAL_LINE = re.compile(
    r"(?i)\b(?:user(?:name)?|login|e-?mail|account|ssid|host|wi-?fi|network|router)\b"
)  # "user: bob, pw: x", "wifi: HomeNet, pass: x"
# "password maple-syrup-4471": no separator at all, so the value must mix letters and digits and end
# the clause ("password 2FA required" and "password abc123 is weak" do not).
PASSWORD_DIRECT = re.compile(
    r"(?i)(?:password|passwd|pswd|passcode|passphrase)[ \t]+[\"'`]?(?P<value>[^\s\"'`]{6,64}+)"
    r"(?P<after>[\"'`]?[.,;:!?)]*[ \t]*"
    r"(?:\n|$|\(|[-\u2013\u2014][ \t]|(?:and|but|or|so|for|on|to|please|pls|if)\b))?"
)
_DIRECT_WORDS = ("password", "passwd", "pswd", "passcode", "passphrase")

URL_CREDENTIALS = re.compile(r"://[^\s:/@]{0,64}:(?P<pw>[^\s:/@]{1,128})@")  # scheme://user:pw@host
_ENGLISH_PASSWORD_WORDS = set(_DATA["english_password_words"])
# "pass" alone is a ticket, a mountain road or a test run: a word value needs one of these before it.
_STRONG_PASS_QUALIFIERS = _PASS_QUALIFIERS - {"my", "our", "the", "your", "default"}
_CHANGE_BEFORE = re.compile(  # "I changed my wifi password to ...", "set the admin password to ..."
    r"(?i)\b(?:set|sets|setting|changed?|changes|changing|reset|resets|resetting|update[ds]?|updating|"
    r"switch(?:ed|es)?|made|make)[ \t]+(?:[\w'-]+[ \t]+){0,3}$"
)


def assignment_shapes(text: str, low: str, key: bool = True, cred: bool = True) -> set[str]:
    """`key`, `cred`: whether "key" and "cred" are in `low`, when the caller knows (saves scans)."""
    found: set[str] = set()
    pass_pw = list(positions(low, ("pass", "pw")))  # shared with the prose rule below
    if ":" in text or "=" in text:  # every assignment has one; over half of all chat turns have neither
        words = tuple(w for w in ASSIGNMENT_KEYWORDS if (key or w != "key") and (cred or w != "credential"))
        keywords = [*positions(low, words), *((i, "pass") for i, w in pass_pw if w == "pass")]
        keywords += [(i, "pwd") for i, w in pass_pw if w == "pw" and low.startswith("pwd", i)]
        found |= assigned(text, sorted(keywords))
    extra = _PASSWORD_LITERALS if low.isascii() else _PASSWORD_LITERALS + _PASSWORD_LITERALS_NON_ASCII
    if any(_is_password_statement(text, low, i) for i, _ in [*pass_pw, *positions(low, extra)]):
        found.add("password")
    if "://" in text and any(is_password_literal(m["pw"], False) for m in URL_CREDENTIALS.finditer(text)):
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
    if i and text[i - 1].isalnum():
        return False
    m = PASSWORD_STATEMENT.match(text, i)
    if not m:
        return low.startswith(_DIRECT_WORDS, i) and _is_direct_password(text, i)
    quoted = m["quoted"] is not None
    value = m["quoted"] if quoted else m["bare"].rstrip(TRAILING_PUNCT)
    clause_end = quoted or m["after"] is not None or value != m["bare"]
    if not (clause_end or m["sep"] in (":", "=")) or ADJECTIVE_COMPOUND.fullmatch(value):
        return False  # after "is", a bare token must end the clause: "is stored hashed" is prose
    if m["sep"] and m["sep"][0] == "-" and not text[m.start("sep") - 1].isspace() and not m["about"]:
        return False  # "--password-stdin", "password-protected": a compound, not a dash
    to_verb = m["to"] and any(v in m["to"].lower() for v in ("set", "chang", "updat"))
    if m["to"] and not to_verb and not _CHANGE_BEFORE.search(text, max(0, i - 60), i):
        return False  # "the password to log in": "to" states a value only after a verb of change
    word = low[i : m.end("word")]
    # In prose a stated password is a secret whatever its characters; a word needs the clause to end
    # there ("Password: see 1Password" is an instruction) and the statement to be no code.
    literal = is_password_literal(value, quoted)
    # "is easy to guess", "is hard to remember": an adjective then an infinitive, not a value
    word_end = quoted or value != m["bare"] or (m["after"] is not None and m["after"].strip() != "to")
    wordy = (
        not literal
        and word_end
        and word in _ENGLISH_PASSWORD_WORDS
        # (a passphrase's words are `pipelines.screening.phrases`' to judge)
        and (is_word_password(value) or (quoted and "phrase" not in word and is_quoted_phrase(value)))
        and stated_in_prose(text, i, m)
    )
    if not (literal or wordy):
        return False
    if word not in _AMBIGUOUS_PASSWORD_WORDS:
        return True
    # "pass"/"pw": only after a qualifier ("the wifi pw is"), opening a line ("pw: ...") or on a line
    # naming a user ("login: bob, pass: ..."); not a test status ("PASS: build-42"), not code
    # ("pw = x*2"), and with letters and digits or symbols ("your pass is valid until 2025"). A word
    # after "pass" needs a stronger qualifier: "my pass is ready" is a ticket.
    line = text[text.rfind("\n", 0, i) + 1 : i].strip(" \t-*>#\u2022")
    prev = _PREVIOUS_WORD.search(text, max(0, i - 30), i)
    prev_word = prev[1].lower() if prev else ""
    credentials = bool(_CREDENTIAL_LINE.search(line))
    if wordy:
        about = set((m["about"] or "").lower().split())
        strong = credentials or prev_word in _STRONG_PASS_QUALIFIERS or bool(about & _STRONG_PASS_QUALIFIERS)
        return strong or (word != "pass" and not line)
    qualified = not line or credentials or prev_word in _PASS_QUALIFIERS
    mixed = re.search("[A-Za-z]", value) and re.search("[^A-Za-z]", value)
    code = m["sep"] == "=" and text[m.start("sep") - 1] in " \t"
    return bool(qualified and mixed and not code and not text.startswith("PASS", i))


def _is_direct_password(text: str, i: int) -> bool:
    """ "password maple-syrup-4471": a password word, a space, a value mixing letters and digits."""
    m = PASSWORD_DIRECT.match(text, i)
    if not m:
        return False
    value = m["value"].rstrip(TRAILING_PUNCT)
    if not (m["after"] is not None or value != m["value"]) or not re.search("[A-Za-z]", value):
        return False
    line = text[text.rfind("\n", 0, i) + 1 : i].lstrip(" \t-*>#\u2022")
    if CODE_LINE.match(line):
        return False
    if not re.search("[0-9]", value):  # words: three or more joined ("password river-stone-moss")
        return value.count("-") >= 2 and is_word_password(value) and not CONDITION_BEFORE.search(line)
    if UNIT.fullmatch(value) or ADJECTIVE_COMPOUND.fullmatch(value):
        return False  # "password 12chars", "password v2.1", "password SHA256-hashed"
    return is_password_literal(value, False)
