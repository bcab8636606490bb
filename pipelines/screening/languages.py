"""Passwords stated in the other languages a European team writes in, for `pipelines.screening`:
"mi contraseña es girasol", "das Passwort lautet Sonnenblume", "mot de passe : tournesol", "la
password è girasole", "a senha é girassol", "het wachtwoord is zonnebloem", "hasło to słonecznik",
"lösenordet är solros", "adgangskoden er …", "passordet er …", "salasana on …", "heslo je …",
"lozinka je …", "geslo je …", "parola este …", "пароль: …".

Each word for a password is read with its own language's copulas (Polish "to", Finnish "on",
Italian "è"), so "the password to Netflix" or "password on the fridge" stay English prose. A value
of letters is a password only where the clause ends after it and it is none of the words that
language puts there instead ("falsch", "incorrecta", "oublié", "sbagliata", "fraca", "onjuist",
"nieprawidłowe", "fel", "väärä", "špatné"...); a value with a digit or a symbol is read as in
`pipelines.screening.statements`. Pure stdlib.
"""

from __future__ import annotations

import re

from pipelines.screening.passwords import (
    NOT_PASSWORD_WORDS,
    PASSWORD_PLACEHOLDERS,
    TRAILING_PUNCT,
    is_password_literal,
    stated_in_prose,
)
from pipelines.screening.tables import table
from pipelines.screening.text import positions

_DATA = table("languages")  # the word lists

_WORDS = (
    r"contrase(?:\u00f1|n)(?:a|ya)|contrasinal|clave"  # es, ca, gl
    r"|passw(?:o|\u00f6)rt|kennwort|(?:wlan|netzwerk)[ -]?schl(?:\u00fc|ue)ssel"  # de
    r"|mot[ \t]+de[ \t]+passe|mdp|password"  # fr; the English word in another language's sentence
    r"|senha|palavra[ -]passe|wachtwoord|has(?:\u0142|l)o"  # pt, nl, pl
    r"|l(?:\u00f6|o)senord(?:et)?|adgangskode(?:n)?|kodeord(?:et)?|passord(?:et)?"  # sv, da, no
    r"|salasana(?:ni|si|mme|nne)?|heslo|lozink[ae]|geslo"  # fi, cs, sk, hr, sl
    r"|parol(?:a|ele)?|parool|parole"  # ro, et, lv
    r"|slapta(?:\u017e|z)odis|jelsz(?:\u00f3|o)|\u043f\u0430\u0440\u043e\u043b(?:\u044c|\u0430|\u0430\u0442\u0430)"
)
_COPULAS = {language: set(words) for language, words in _DATA["copulas"].items()}
_LANGUAGE_OF = tuple((start, language) for start, language in _DATA["language_of"])
_COPULA = (
    r"es|era|\u00e9s|\u00e9|ist|war|lautete?|hei(?:\u00df|ss)t|est|\u00e9tait|etait|c['\u2019]est|\u00e8|e['\u2019]"
    r"|e|fica|is|was|luidt|to|jest|brzmi|by(?:\u0142|l)o|\u00e4r|ar|var|er|on|oli|je|byla|zn(?:\u00ed|i)|bila"
    r"|bilo|glasi|este|ir|yra|\u044d\u0442\u043e"
)
_PREPOSITIONS = (
    r"del|de|de[ \t]+la|du|des|da|do|della|dello|dei|di|van|voor|f(?:\u00fc|u)r|zum|zur|vom|von|der|den"
    r"|dem|f(?:\u00f6|o)r|till|til|k|ke|na|za|pro|dla|od|pentru|al|ao|\u00e0|a|au|per|para|z"
)
_POSSESSIVES = r"mitt|min|mit|mi|mia|mio|mijn|mein|meine|moje|m\u00e9|ma|mon|minha|meu|mea|meva|m\u00f3j|moj"
_OPEN, _CLOSE = "\"'`\u201c\u2018\u00ab\u201e", "\"'`\u201d\u2019\u00bb\u201c"
LANGUAGE_PASSWORD = re.compile(
    rf"(?i)(?P<word>{_WORDS})(?!\w)"
    rf"(?P<about>(?:[ \t]+(?:{_POSSESSIVES}))?"
    rf"(?:[ \t]+(?:{_PREPOSITIONS})(?:[ \t]+[\w'\u2019.-]{{1,30}}){{1,3}}?)?)"
    rf"(?:[ \t]*(?P<sep>[:=]|[\u2013\u2014]|-{{1,2}}>?|\u2192)"
    rf"|,?[ \t]+(?P<copula>{_COPULA})(?!\w)(?:[ \t]*:)?)[ \t]*"
    rf"(?:[{_OPEN}](?P<quoted>[^\s{_CLOSE}][^\n{_CLOSE}]{{2,79}})[{_CLOSE}]"
    rf"|(?P<bare>[^\s\"'`]{{3,64}}+))"
    r"(?P<after>[ \t]*(?:\n|$|\(|[-\u2013\u2014][ \t]|(?:y|und|et|e|en|i|och|og|ja|a|and|but|pero|aber|mais"
    r"|ma|mas|maar|ale|men|mutta|ali|dar|ve)(?!\w)))?"
)
_LETTERS = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+){0,4}")
_NOT_PASSWORDS = {word for words in _DATA["not_passwords"].values() for word in words.split()}
# Where a word can start, found at C speed: in every text the words written in ASCII, in a text with
# other characters those written with them too ("hasło", "lösenord", "пароль", "la clave del wifi").
_STARTS = (
    "pass", "contrase", "kennwort", "mdp", "senha", "wachtwoord", "salasan", "eslo", "haslo", "lozink",
    "kode", "parol",
)  # fmt: skip
_STARTS_NON_ASCII = (
    "clave", "schl", "has\u0142", "senord", "slapta", "jelsz", "\u043f\u0430\u0440\u043e\u043b",
)  # fmt: skip
# After "pass", only these start a word for a password here ("passed", "passion" do not); the English
# "password" only before a copula of another language ("la password \u00e8", "das Password ist").
_PASS_WORDS = ("passw\u00f6rt", "passwort", "passord", "passe", "password")
_FOREIGN_COPULA_AFTER = re.compile(r"[ \t]+(?:ist|es|est|jest|je|er|este|lautet)[ \t]")
_AMBIGUOUS = {"clave", "parola", "parole", "parolele", "parool", "mdp"}
_WIFI = re.compile(r"(?i)wi-?fi|wlan|red|router|acceso|internet")


def _language(word: str) -> str:
    for start, language in _LANGUAGE_OF:
        if word.startswith(start):
            return language
    return "hu"


def _word_start(low: str, i: int) -> int:
    """Where the word around a found stem starts: "mot de passe", "palavra-passe", "l\u00f6senord"."""
    for before in ("mot de ", "palavra-", "palavra ", "adgangs", "l\u00f6", "lo"):
        if low.startswith(before, i - len(before)) and i >= len(before):
            return i - len(before)
    return i


def has_language_password(text: str, low: str) -> bool:
    starts = _STARTS if low.isascii() else _STARTS + _STARTS_NON_ASCII
    for i, stem in positions(low, starts):
        if stem == "pass":
            if not low.startswith(_PASS_WORDS, i):
                continue
            if (
                low.startswith("password", i)
                and low.isascii()
                and not _FOREIGN_COPULA_AFTER.match(low, i + 8)
            ):
                continue  # English: `pipelines.screening.statements` reads it
        at = _word_start(low, i) if stem in ("pass", "senord", "kode") else i
        if stem == "eslo":
            at -= 1  # "heslo", "geslo"
            if at < 0 or low[at] not in "hg":
                continue
        if at and low[at - 1].isalnum():
            continue  # "compass", "bypass": inside a word
        m = LANGUAGE_PASSWORD.match(text, at)
        if m and _is_stated(text, low, at, m):
            return True
    return False


def _is_stated(text: str, low: str, at: int, m: re.Match[str]) -> bool:
    word = re.sub(r"[ \t]+", " ", m["word"].lower())
    language = _language(word)
    copula = (m["copula"] or "").lower()
    if copula and copula not in _COPULAS[language]:
        return False  # "the password on the fridge", "la parola è amore"
    if m["sep"] and word == "password":
        return False  # the English word with a separator: `pipelines.screening.statements` reads it
    if m["sep"] and m["sep"][0] == "-" and not text[m.end("sep") : m.end("sep") + 1].isspace():
        return False  # "Passwort-Manager": a compound, not a dash
    quoted = m["quoted"] is not None
    value = m["quoted"] if quoted else m["bare"].rstrip(TRAILING_PUNCT)
    if word in _AMBIGUOUS and not re.search(r"[^\W\d_]", value):
        return False  # "parole: 2025", "clave: 42": a number after a word that means more than password
    clause_end = quoted or m["after"] is not None or value != m["bare"]
    if not (clause_end or m["sep"] in (":", "=")):
        return False  # after a copula a value ends the clause: "hasło to podstawa bezpieczeństwa"
    literal = is_password_literal(value, quoted) and not any(
        p in value.lower() for p in PASSWORD_PLACEHOLDERS
    )
    if not literal:
        qualified = word != "clave" or _WIFI.search(m["about"] or "")
        if not (clause_end and qualified and _is_plain_word(value)):
            return False
    return stated_in_prose(text, at, m)


def _is_plain_word(value: str) -> bool:
    low = value.lower()
    if not 4 <= len(value) <= 40 or not _LETTERS.fullmatch(value) or len(set(low)) < 3:
        return False
    parts = low.split("-")
    # (English endings say nothing here: "Schmetterling", "Frühling" are nouns.)
    return not any(p in _NOT_PASSWORDS or p in NOT_PASSWORD_WORDS for p in parts) and not any(
        w in low for w in PASSWORD_PLACEHOLDERS if w.isalpha()
    )
