"""Formats of personal numbers, for `pipelines.screening`: card numbers, SSNs, IBANs (mod-97 checked,
any country), bank account numbers (stated, with a bank named nearby) and identity-document numbers
stated after their name (passport, driving licence, national ID card, UK National Insurance,
Canadian SIN (Luhn), US tax ids, Aadhaar (Verhoeff), NHS (mod 11), Spanish DNI/NIE (check letter),
Brazilian CPF, Dutch BSN, Polish PESEL (check digits)); python-stdnum checks the check digits.
"""

from __future__ import annotations

import re

from stdnum import iban
from stdnum.br import cpf
from stdnum.es import dni, nie
from stdnum.gb import nhs
from stdnum.in_ import aadhaar
from stdnum.luhn import is_valid as luhn_valid
from stdnum.nl import bsn
from stdnum.pl import pesel

from pipelines.screening.text import positions

# --- card numbers and SSNs: boundaries are checked in code so each regex can start at a digit or dash
CARD_NUMBER = re.compile(
    r"[0-9](?:[0-9]{12,18}"
    r"|[0-9]{3}(?P<s>[ -])[0-9]{4}(?P=s)[0-9]{4}(?P=s)[0-9]{1,4}(?:(?P=s)[0-9]{1,3})?"  # 4-4-4-4(-3)
    r"|[0-9]{3}(?P<a>[ -])[0-9]{6}(?P=a)[0-9]{4,5})"  # Amex 4-6-5, Diners 4-6-4
    r"(?![\w.+/-]|[ -][0-9])"
)
SSN_TAIL = re.compile(r"-(?!00)[0-9]{2}-(?!0000)[0-9]{4}(?![\w+/-]|\.[0-9])")  # area digits checked in code
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


def _other_number(text: str, start: int) -> bool:
    """The number at `start` continues another token, or follows a word saying what else it is."""
    prev, prev2 = text[start - 1 : start] or " ", text[max(start - 2, 0) : max(start - 1, 0)] or " "
    if prev.isalnum() or prev in "_.+/-" or (prev in " -" and prev2.isdigit()):
        return True
    before = text[max(0, start - 40) : start]
    return bool(_OTHER_NUMBER_CONTEXT.search(before)) and not _CARD_CONTEXT.search(before)


def has_card(text: str) -> bool:
    for m in CARD_NUMBER.finditer(text):
        d = re.sub(r"[^0-9]", "", m.group())
        if _issuer_known(d) and luhn_valid(d) and not _other_number(text, m.start()):
            return True
    return False


def has_ssn(text: str) -> bool:
    for m in SSN_TAIL.finditer(text):
        s = m.start() - 3
        area = text[max(s, 0) : m.start()]  # 000, 666 and 900-999 are never issued
        if s >= 0 and area.isdigit() and area not in ("000", "666") and area < "900":
            if not _other_number(text, s):
                return True
    return False


# --- IBANs: country, two check digits, the national account number (python-stdnum checks the
# country's length and format and ISO 13616's mod 97): only 1 in ~97 strings of the right shape
# passes, and ordinary text holds almost none of those.
IBAN = re.compile(  # "DE89 3704 0044 0532 0130 00" or "DE89370400440532013000"
    r"(?<![A-Za-z0-9])[A-Z]{2}[0-9]{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,4})?(?![A-Za-z0-9])"
)
IBAN_ANY_CASE = re.compile(IBAN.pattern, re.IGNORECASE)  # typed in lower case, named "IBAN" nearby


def iban_valid(value: str) -> bool:
    """A valid IBAN whose account part is not a run of one or two characters."""
    s = value.replace(" ", "").upper()
    # The country's own account check digits are not asked for: a secret screen errs toward
    # catching, and published examples (BE68 5390 0754 7034) fail them.
    return len(set(s[4:])) >= 3 and iban.is_valid(s, check_country=False)


def has_iban(text: str, low: str, shape: bytes) -> bool:
    """`shape` is the text's byte shape (letters and symbols "x", digits "0"): in an ASCII text its
    "xx00" runs are where an IBAN can start, found at C speed."""
    for i, _ in positions(low, ("iban",)):  # in any case in the words after "IBAN"
        if any(iban_valid(m.group()) for m in IBAN_ANY_CASE.finditer(text, i + 4, i + 80)):
            return True
    if not text.isascii():
        return any(iban_valid(m.group()) for m in IBAN.finditer(text))
    i = shape.find(b"xx00")
    while i != -1:
        m = IBAN.match(text, i)
        if m and iban_valid(m.group()):
            return True
        i = shape.find(b"xx00", i + 1)
    return False


# --- bank account numbers: digits stated after "account number", with a bank named nearby ----------
BANK_ACCOUNT = re.compile(
    r"(?i)(?:account|acct|a/c)"
    r"(?:[ \t]*(?:number|num|no\.?|nr\.?|#))?"
    r"(?P<about>[ \t]+(?:at|with|in|for|on)(?:[ \t]+[\w&'.-]{1,30}){1,4}?(?=[ \t]+(?:is|was)\b|[ \t]*[:#]))?"
    r"(?:[ \t]*[:=#\u2013\u2014-][ \t]*|[ \t]+(?:is|was)(?:[ \t]*:)?[ \t]*|[ \t]+)"
    r"(?P<num>[0-9]{2,20}(?:[ -][0-9]{2,20}){0,5})(?![\w.,/-]?[0-9]|[\w-])"
)
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{2}-[0-9]{2}-[0-9]{4}")  # not an account number
# A bank in the same stretch of text: an "account 123456789012" of a cloud provider is no bank account.
_BANK_CONTEXT = re.compile(  # searched in the lower-cased text
    r"\b(?:bank(?:ing)?|routing|sort[ \t]+code|iban|swift|bic|aba|ach|wire|checking|chequing|savings"
    r"|transit|bsb|branch|direct[ \t]+deposit|deposit|credit[ \t]+union|payee|beneficiary)\b"
)


_NUMBER_AHEAD = re.compile(r"[^\n]{0,60}?[0-9]{2}")
_BANK_BEFORE = re.compile(r"(?i)\b(?:bank|checking|chequing|savings)[ \t]+$")


def has_bank_account(text: str, low: str) -> bool:
    for i, _ in positions(low, ("account", "acct", "a/c")):
        if (i and text[i - 1].isalnum()) or not _NUMBER_AHEAD.match(text, i):
            continue
        m = BANK_ACCOUNT.match(text, i)
        if not m or _DATE.fullmatch(m["num"]) or not 6 <= sum(c.isdigit() for c in m["num"]) <= 20:
            continue
        if _BANK_BEFORE.search(text, max(0, i - 12), i) or _BANK_CONTEXT.search(
            low, max(0, i - 120), m.end() + 120
        ):
            return True
    return False


# --- identity documents and national numbers, stated after their name --------------------------------
# "my passport number is 533380006", "driving licence: SMITH801015J99AB", "NI number QQ 12 34 56 C".
# The name is required (a bare 9-digit number is anything), and the value must have the shape of
# that document: enough digits, and the check digits where the number has them.
ID_STATEMENT = re.compile(
    r"(?i)(?P<name>passport"
    r"|(?:driver['\u2019]?s?|driving)[ \t-]+licen[cs]e|(?-i:DL)(?=[ \t]*(?:#|no\b|number))"
    r"|(?:national|citizen|personal|resident|residence)[ \t]+(?:id(?:entity)?|identification)(?:[ \t]+card)?"
    r"|id(?:entity)?[ \t]+card|national[ \t]+insurance|(?-i:NINO|NI(?=[ \t]+(?:number|no\b)))"
    r"|social[ \t]+security|(?-i:SSN)|social[ \t]+insurance|(?-i:SIN)"
    r"|tax[ \t]+(?:id(?:entification)?|file|reference|payer[ \t]+id)|(?-i:TIN|EIN|ITIN|TFN|UTR)"
    r"|aadhaa?r|(?-i:PAN)(?=[ \t]*(?:card|number|no\b|:))|nhs|(?-i:DNI|NIE|NIF|CPF|BSN|PESEL))"
    r"(?:[ \t]+card)?(?:[ \t]*(?:number|num|no\.?|nr\.?|#|id))?"
    r"(?P<about>[ \t]+(?:for|of|on|at)(?:[ \t]+[\w'.-]{1,30}){1,3}?(?=[ \t]+(?:is|was)\b|[ \t]*:))?"
    r"(?:[ \t]*[:=#\u2013\u2014-][ \t]*|[ \t]+(?:is|was|reads)(?:[ \t]*:)?[ \t]*|[ \t]+\(?)"
    r"(?P<value>[A-Za-z0-9]{1,20}(?:[ .-][A-Za-z0-9]{1,20}){0,5})"
)
_ID_KIND = {  # a name's first letters, lower-cased, to its kind (names of words: _id_kind_in_words)
    "pas": "passport", "dri": "licence", "dl": "licence", "nin": "nino", "ni": "nino", "ssn": "ssn",
    "sin": "sin", "tax": "tax", "tin": "tax", "ein": "tax", "iti": "tax", "tfn": "tax", "utr": "tax",
    "aad": "aadhaar", "pan": "pan", "nhs": "nhs", "dni": "dni", "nie": "dni", "nif": "dni", "cpf": "cpf",
    "bsn": "bsn", "pes": "pesel",
}  # fmt: skip
# Where a name can start: lower-case words found in the lower-cased text, upper-case abbreviations
# in the text as written (each is one C-speed find; the regex then runs only at those positions).
_ID_STARTS_LOW = (
    "passport", "driv", "national", "citizen", "personal", "residen", "id card", "identity card",
    "social", "tax", "aadha", "nhs",
)  # fmt: skip
_ID_STARTS = (
    "DL", "NI", "SSN", "SIN", "TIN", "EIN", "ITIN", "TFN", "UTR", "PAN", "DNI", "CPF", "BSN", "PESEL",
)  # fmt: skip
_NINO = re.compile(r"[A-Z]{2}[0-9]{6}[A-D]?")
_PAN = re.compile(r"[A-Z]{3}[ABCFGHLJPT][A-Z][0-9]{4}[A-Z]")
_DNI = re.compile(r"[XYZ0-9][0-9]{7}[A-Z]")


def _id_value_ok(kind: str, value: str) -> bool:
    """Whether `value` (separators removed, upper case) has the shape of a number of that kind."""
    digits = sum(c.isdigit() for c in value)
    letters = len(value) - digits
    if kind == "passport":
        return 6 <= len(value) <= 10 and digits >= 5 and letters <= 3
    if kind == "licence":
        return 5 <= len(value) <= 20 and digits >= 5
    if kind == "id":
        return 6 <= len(value) <= 20 and digits >= 5
    if kind == "nino":
        return bool(_NINO.fullmatch(value))
    if kind == "ssn":  # area 000, 666 and 9xx, group 00 and serial 0000 are never issued
        area_ok = value[:3] not in ("000", "666") and value[0] != "9"
        return len(value) == 9 == digits and area_ok and value[3:5] != "00" and value[5:] != "0000"
    if kind == "sin":
        return len(value) == 9 == digits and luhn_valid(value)
    if kind == "tax":
        return 8 <= len(value) <= 16 and digits >= 7
    if kind == "aadhaar":
        return aadhaar.is_valid(value)
    if kind == "pan":
        return bool(_PAN.fullmatch(value))
    if kind == "nhs":
        return nhs.is_valid(value)
    if kind == "dni":
        if not _DNI.fullmatch(value):
            return False
        return nie.is_valid(value) if value[0] in "XYZ" else dni.is_valid(value)
    if kind == "cpf":
        return len(set(value)) > 1 and cpf.is_valid(value)
    if kind == "bsn":
        return bsn.is_valid(value)
    if kind == "pesel":
        return pesel.is_valid(value)
    return False


def _id_kind_in_words(name: str) -> str:
    if name.startswith("social"):
        return "ssn" if "security" in name else "sin"
    return "nino" if "insurance" in name else "id"  # national insurance; national/identity card


def id_number_shapes(text: str, low: str) -> set[str]:
    """The shapes ("ssn" or "id_number") of identity numbers stated after their name in `text`."""
    found: set[str] = set()
    starts = {i for i, _ in positions(low, _ID_STARTS_LOW)} | {i for i, _ in positions(text, _ID_STARTS)}
    for start in sorted(starts):
        m = ID_STATEMENT.match(text, start) if not (start and text[start - 1].isalnum()) else None
        if not m:
            continue
        name = m["name"].lower()
        kind = _ID_KIND.get(name[:3]) or _ID_KIND.get(name[:2]) or _id_kind_in_words(name)
        tokens = re.split(r"[ .-]", m["value"])
        if kind not in ("licence", "nino") and not any(c.isdigit() for c in tokens[0]):
            continue  # "passport photo 35x45", "passport number format is ...": no number there
        # The number ends at the first token past the first that has no digit ("X1234567 and my ..."),
        # but a NINO ends in a lone letter ("QQ 12 34 56 C").
        keep = 1
        while keep < len(tokens) and (
            any(c.isdigit() for c in tokens[keep]) or (kind == "nino" and len(tokens[keep]) == 1)
        ):
            keep += 1
        if _id_value_ok(kind, "".join(tokens[:keep]).upper()):
            found.add("ssn" if kind == "ssn" else "id_number")
    return found
