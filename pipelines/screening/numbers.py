"""More personal numbers, for `pipelines.screening`: a card number split over lines or grouped
oddly ("4111 1111\\n1111 1111", "card: 41 11 11 11 ..."), and medical record numbers stated after
their name (MRN, medical or health record number, hospital number, patient ID; an Australian
Medicare number with its check digit, a US Medicare Beneficiary Identifier by its shape).

A card's usual grouping (4-4-4-4, Amex 4-6-5) broken by one line break is read as a card anywhere,
like the unbroken number; any other grouping (or several breaks, or dots) only right after a card's
name, since tables and lists put numbers side by side. Either way the digits must pass the issuer
table and Luhn, as in `pipelines.screening.formats`. Pure stdlib.
"""

from __future__ import annotations

import re

from pipelines.screening.formats import _issuer_known, _other_number, luhn_valid
from pipelines.screening.text import positions

# --- card numbers split over lines ---------------------------------------------------------------
# Digit groups with one separator between each two: a space, a dash, a dot, or a line break (with
# spaces, or a dash ending the line). Digits and separators are disjoint, so this is linear.
DIGIT_GROUPS = re.compile(
    r"[0-9]{1,19}+(?:(?:[ \t]*+\r?\n[ \t]*+|-\r?\n|[ \t]?-[ \t]?|[ \t]|\.)[0-9]{1,19}+){1,18}+"
)
_BREAK = re.compile(r"\r?\n")
# A card's name right before the number: "card number", "credit card:", "visa", "tarjeta", "Karte".
_CARD_NAMED = re.compile(
    r"(?i)(?:\b(?:(?:credit|debit|bank|payment|gift|prepaid)[ \t]+)?card"
    r"(?:[ \t]+(?:number|num|no\.?|#|details))?"
    r"|\b(?:visa|master[ \t]?card|amex|american[ \t]+express|discover|maestro|jcb|unionpay|cc|carte"
    r"|carte[ \t]+bancaire|tarjeta|karte|kartennummer|kreditkarte|carta|cart(?:\u00e3|a)o|kaart|kort|karta"
    r"|kortti))"
    r"[ \t]*(?:[:#=\u2013\u2014-]|\bis\b|\bwas\b|\bist\b|\bes\b|\best\b|\u00e8|\u00e9)?[ \t]*:?\s*$"
)


def _standard(lengths: list[int]) -> bool:
    """4-4-4-4 (the last group 1-4 digits: 13 to 19 in all) or Amex/Diners 4-6-5 / 4-6-4."""
    if len(lengths) >= 4 and all(n == 4 for n in lengths[:-1]) and 1 <= lengths[-1] <= 4:
        return True
    return len(lengths) == 3 and lengths[:2] == [4, 6] and lengths[2] in (4, 5)


def has_split_card(text: str) -> bool:
    for m in DIGIT_GROUPS.finditer(text):
        run = m.group()
        groups = re.findall(r"[0-9]+", run)
        if len(groups) < 2 or sum(map(len, groups)) < 13 or _other_number(text, m.start()):
            continue
        named = _CARD_NAMED.search(text, max(0, m.start() - 40), m.start()) is not None
        seps = re.findall(r"[^0-9]+", run)
        for end in range(len(groups), 1, -1):  # the longest run of groups that makes a card
            digits = "".join(groups[:end])
            if not 13 <= len(digits) <= 19:
                continue
            breaks = sum(bool(_BREAK.search(s)) for s in seps[: end - 1])
            dots = any("." in s for s in seps[: end - 1])
            lengths = [len(g) for g in groups[:end]]
            if not named and (breaks != 1 or dots or not _standard(lengths)):
                continue  # unnamed: a usual grouping broken by one line break only
            if named and breaks > 3:
                continue
            if _issuer_known(digits) and luhn_valid(digits):
                return True
    return False


# --- medical record numbers -------------------------------------------------------------------------
MEDICAL_RECORD = re.compile(
    r"(?i)(?P<name>(?-i:MRN)|(?:medical|health|patient|hospital)[ \t]+(?:record|rec\.?|chart)s?"
    r"(?P<suffix>[ \t]*(?:number|num|no\.?|nr\.?|#|id))"
    r"|(?P<kind>hospital|patient['\u2019]?s?|medicare|(?-i:MBI))"
    r"(?P<kind_suffix>[ \t]*(?:number|num|no\.?|nr\.?|#|id))?)"
    r"(?:[ \t]*(?:number|num|no\.?|nr\.?|#))?"
    r"(?:[ \t]*[:=#\u2013\u2014-][ \t]*|[ \t]+(?:is|was)(?:[ \t]*:)?[ \t]*|[ \t]+)"
    r"(?P<value>[A-Za-z0-9]{1,12}(?:[ -][A-Za-z0-9]{1,12}){0,3})(?![\w-])"
)
_MEDICAL_STARTS_LOW = ("medic", "health", "patient", "hospital")  # "medic": medical, medicare
_MEDICAL_STARTS = ("MRN", "MBI")
_MBI = re.compile(r"[1-9][AC-HJKMNP-RT-Y][AC-HJKMNP-RT-Y0-9][0-9][AC-HJKMNP-RT-Y][AC-HJKMNP-RT-Y0-9][0-9]"
                  r"[AC-HJKMNP-RT-Y]{2}[0-9]{2}")  # fmt: skip
_QUANTITY_AFTER = re.compile(r"(?i)[ \t]*(?:digits?|characters?|chars?|years?|days?|months?|pages?|%)")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{2}-[0-9]{2}-[0-9]{4}")


def _medicare_au(d: str) -> bool:
    """An Australian Medicare number: 10 digits (11 with the person's number), first 2-6, a check
    digit (the 9th) of the first eight weighted 1, 3, 7, 9, 1, 3, 7, 9."""
    if len(d) not in (10, 11) or not d.isdigit() or d[0] not in "23456":
        return False
    return sum(int(c) * w for c, w in zip(d[:8], (1, 3, 7, 9, 1, 3, 7, 9), strict=True)) % 10 == int(d[8])


def has_medical_record(text: str, low: str) -> bool:
    words_low = tuple(w for w in _MEDICAL_STARTS_LOW if w in low)  # most texts hold none
    words = tuple(w for w in _MEDICAL_STARTS if w in text) if "mrn" in low or "mbi" in low else ()
    if not (words_low or words):
        return False
    starts = {i for i, _ in positions(low, words_low)} | {i for i, _ in positions(text, words)}
    for i in sorted(starts):
        if i and text[i - 1].isalnum():
            continue
        m = MEDICAL_RECORD.match(text, i)
        if not m or _QUANTITY_AFTER.match(text, m.end()) or _DATE.fullmatch(m["value"]):
            continue
        value = re.sub(r"[ -]", "", m["value"]).upper()
        kind = (m["kind"] or "").lower()
        if kind in ("medicare", "mbi"):
            if _MBI.fullmatch(value) or _medicare_au(value):
                return True
            continue
        if kind and not m["kind_suffix"]:
            continue  # "hospital 1234", "patient 2024": named for nothing
        digits = sum(c.isdigit() for c in value)
        if 6 <= digits <= 12 and len(value) - digits <= 3 and len(value) <= 14:
            return True
    return False
