"""Sensitivity screening: does a turn's text hold a *high* shape (a secret or a personal number)?

A high turn is stored as written but never embedded, never sent to a model and never returned by
search. A false positive silently hides an ordinary turn, so each shape is paired with checks that
keep precision: provider prefixes need random-looking bodies, assignments must assign a literal
(not a variable, type, env lookup or placeholder), card numbers need an issuer prefix and Luhn, etc.

Pure stdlib and fast, since it runs inline on every write (~0.1-0.5 ms per 10 kB): each check is
gated by substring tests at C speed, keyword rules match only where the keyword occurs, and every
repeat is bounded or possessive with nothing nested, so there is no catastrophic backtracking.

Rules run on a normalised copy (NFKC, invisible characters removed, Unicode spaces made plain), so
fullwidth letters, zero-width joiners or no-break spaces do not hide a secret. Provider token
formats, private-key bodies, Basic credentials, cards, SSNs, IBANs, bank account numbers and
identity-document numbers live in `pipelines.secret_formats`; passwords told in prose or assigned
in code in `pipelines.secret_statements` (with wifi keys, login pairs and security answers), and in
the other languages of Europe in `pipelines.secret_languages`; passphrases and seed phrases in
`pipelines.secret_phrases`; passwords on a command line and session cookies in
`pipelines.secret_commands`; TOTP seeds and cryptocurrency private keys in `pipelines.secret_keys`;
cards split over lines and medical record numbers in `pipelines.secret_numbers`. PINs, the codes
that open things (alarm, door, safe, phone unlock), recovery codes and card security codes are here.

Shapes: api_key, jwt, private_key, bearer_token, secret_assignment, password (a stated or assigned
password, of any characters in prose; also a wifi/network key or PSK, a login given as a user and
password pair, and a security question's answer), passphrase (several plain words, or a wallet's
seed phrase, seed words or mnemonic), pin (a PIN, an access code, or a recovery/backup/2FA code of
digits or of letters and digits in groups), card_number, card_security_code (a card's CVV, CVC or
CID: 3-4 digits stated after its name), ssn, id_number (passport, driving licence, national
insurance and other national or tax numbers), bank_account (an IBAN, or an account number beside
a bank's name); since rules version 3 also session_cookie (a session cookie's value), otp_seed (a
TOTP/HOTP seed), crypto_private_key (WIF, xprv, or a raw key named as a private key),
medical_record (MRN, medical record, hospital or patient number, a Medicare number), and password
also for one given on a command line or stated in another European language. Stand-in passwords
that documentation and docker files show ("changeme", "admin", "postgres", "password", "secret"...)
are not high.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from pipelines.secret_commands import has_command_password, has_session_cookie
from pipelines.secret_formats import (
    aws_secret_positions,
    has_bank_account,
    has_basic_credentials,
    has_card,
    has_iban,
    has_pem_body,
    has_provider_token,
    has_ssn,
    id_number_shapes,
)
from pipelines.secret_keys import has_named_raw_key, has_otp_seed, has_private_key_string
from pipelines.secret_languages import has_language_password
from pipelines.secret_numbers import has_medical_record, has_split_card
from pipelines.secret_phrases import has_passphrase
from pipelines.secret_statements import (
    assignment_shapes,
    has_secret_statement,
    has_stated_credential,
    looks_random,
    names_other_value,
    positions,
)

HIGH = "high"
NONE = "none"
# Raise it with any change that makes some text read differently: the re-screening stage then
# judges every turn screened by an older version again (`loom screening rescreen`, and the
# scheduler's rescreen pass).
RULES_VERSION = 3
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

# --- personal numbers: cards and SSNs are in pipelines.secret_formats; PINs need the words around
PIN = re.compile(
    r"\b(?:PIN|[Pp]in)(?P<noun>[ _\t]*(?i:code|number|no\.?|#))?"
    # "the PIN for the company card is 4829", "the PIN I use is ...": then a separator must follow
    r"(?P<about>[ \t]+(?i:for|to|of|on|at|i|we|you|that)(?:[ \t]+[\w'.-]{1,30}){1,4}?"
    r"(?=[ \t]+(?i:is|was)\b|[ \t]*:))?"
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

# Codes that open something, stated like a PIN: "the alarm code is 1234", "door code 4471#", "my
# phone's unlock code is 2580", "the code to the garage is 8812", "the safe combination is 12-34-56".
# The code must be named for what it opens (not "error code 1234", "zip code", "promo code") and
# given as digits: "the alarm code is on the fridge" states none.
_CODE_OPENS = (
    r"alarm|door|gate|garage|safe|lock|unlock|lock[ -]?screen|screen[ -]?lock|access|entry|entrance"
    r"|keypad|key[ -]?pad|lock[ -]?box|key[ -]?box|key[ -]?safe|padlock|locker|buzzer|intercom|voicemail"
    r"|security|verification|2fa|mfa|otp|one[ -]time|login|sign[ -]?in|auth|authentication|backup"
    r"|recovery|disarm|arming|vault|storage[ -]unit|building[ -](?:door|entry)"
)
_CODE_NAMED_BEFORE = re.compile(
    rf"(?i)(?<![\w-])(?:{_CODE_OPENS})(?:['\u2019]s)?"
    r"(?:[ \t-]+(?:system|panel|door|pad|box|opener|remote|entry|lock|screen|unit))?[ \t-]*$"
)
# In "the code to/for the X", the X must be a thing with a lock.
_CODE_PLACES = {
    "alarm", "door", "doors", "gate", "garage", "safe", "lock", "locker", "padlock", "house", "apartment",
    "flat", "building", "office", "keypad", "lockbox", "shed", "vault", "unlock", "phone", "iphone",
    "ipad", "tablet", "laptop", "storage", "unit", "room", "entrance", "front", "back", "basement",
    "cabinet", "suitcase", "briefcase", "bike", "mailbox", "lobby", "elevator", "lift", "voicemail",
    "wifi", "wi-fi", "router",
}  # fmt: skip
ACCESS_CODE = re.compile(
    r"(?i)(?P<noun>codes?|combination|combo)\b(?:[ \t]+lock\b)?"  # "combination lock: 12-34-56"
    r"(?P<about>[ \t]+(?:to|for|of|on|that)(?:[ \t]+[\w'.-]{1,30}){1,4}?"
    r"(?=[ \t]+(?:is|was|are)\b|[ \t]*[:=]))?"
    r"(?:(?:[ \t]*(?P<sep>[:=\u2192-])|[ \t]+(?P<verb>is|was|are)\b(?:[ \t]*:)?)[ \t]*|[ \t]+)"
    r"[\"'`]?(?P<num>[*#]?[0-9]{4,10}[#*]?|[0-9]{4,5}(?:[- ][0-9]{4,5}){1,3}"  # "1234-5678" backup codes
    r"|(?P<groups>[0-9]{1,3}(?:[ \t]?[-/,.][ \t]?[0-9]{1,3}){2,4}|[0-9]{2}(?: [0-9]{2}){2,3}))"
    r"(?![\w.,:/-]?[0-9]|\w)"
)
_CODE_QUANTITY = re.compile(
    r"(?i)[ \t]*(?:digits?|characters?|chars?|numbers?|times|tries|attempts|seconds?|secs?|minutes?"
    r"|mins?|hours?|days?|weeks?|months?|years?|lines?|loc|words?|pages?|rows?|files?|items?|users?|steps?"
    r"|people|calories|kcal|px|mm|cm|km|kg|lbs?|usd|eur|gbp|dollars?|euros?|pounds?)\b|[ \t]*%"
)


# A generic secret must look machine-made. Measured per-char Shannon entropy of random strings
# (mean / 0.1th percentile): base62 20 chars 4.0 / 3.5, 32 chars 4.6 / 4.1; hex 24 chars 3.5 / 2.9,
# 32 chars 3.6 / 3.1. A threshold of 3.0 keeps practically every base62 key and 32-hex key while
# rejecting repetitive stand-ins ("aaaa1111bbbb2222cccc", "abcabc123123..."). Word-made names score
# 3.4-3.9 too ("user_profile_settings_2024_v2": 3.9), so the slug/word checks, not entropy, reject those.
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
    for i, _ in positions(low, ("pin",)):  # "pin" is also in spinach, opinion...: match only there
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


_DIGITS_AHEAD = re.compile(r"[^\n]{0,80}?[0-9]")
_LOCK_NOUNS = ("combination lock", "combo lock")
_CODE_WORDS = {  # each word of _CODE_OPENS, and the compounds written as one: "lockbox", "keypad"
    *re.findall(r"[a-z0-9]+", _CODE_OPENS),
    *re.findall(r"[a-z0-9]+", _CODE_OPENS.replace("[ -]?", "").replace("[ -]", "")),
}
_YEAR_RANGE = re.compile(r"(?:19|20)[0-9]{2}[ \t]?[-/][ \t]?(?:19|20)[0-9]{2}")  # "2024-2025"
_ABOUT_AHEAD = re.compile(r"(?:codes?|combination|combo)[ \t]+(?:to|for|of|on|that)\b")


def _has_access_code(text: str, low: str, code: bool) -> bool:
    """`code`: whether "code" is in `low` (the caller's gate)."""
    words = ("code",) if code else ()
    for i, _ in positions(low, words + ("comb",) if "comb" in low else words):
        if not _DIGITS_AHEAD.match(text, i):
            continue  # no number follows in the line
        before = low[max(0, i - 30) : i].replace("\u2019", "'").replace("'s", " ").replace("-", " ").split()
        named = (
            any(w in _CODE_WORDS for w in before[-3:])  # a set lookup first, the regex to confirm
            and _CODE_NAMED_BEFORE.search(text, max(0, i - 30), i)
        ) or low.startswith(_LOCK_NOUNS, i)
        if i and low[i - 1].isalpha() and not named:
            continue  # "barcode", "geocode", "passcode" (a password); but "doorcode", "gatecode"
        if not named and not _ABOUT_AHEAD.match(low, i):
            continue  # named neither before ("alarm code") nor after ("the code to the alarm")
        m = ACCESS_CODE.match(text, i)
        if not m or _CODE_QUANTITY.match(text, m.end()) or _YEAR_RANGE.fullmatch(m["num"]):
            continue
        about = set(re.findall(r"[a-z]+", (m["about"] or "").lower()))
        if not (named or about & _CODE_PLACES) or not (m["sep"] or m["verb"] or named):
            continue  # "the code 1234": named for nothing; "code to the alarm 1234": no separator
        if m["groups"] and re.search("[/.]", m["groups"]) and m["noun"].lower().startswith("code"):
            continue  # "12/05/24" is a date; a lock's combination is "12-34-56"
        return True
    return False


# A card's security code: "the CVV is 123", "CVV2: 7890", "security code on the back of the card is
# 321". Three or four digits stated after its name; "security code" and "CID" also name other things,
# so they need a card named nearby. Not "the CVV is on the back", "CVV must be 3 or 4 digits".
CARD_SECURITY_CODE = re.compile(
    r"(?i)(?P<name>cvv2?|cvc2?|cvn2?|cid|(?:card[ \t]+)?security[ \t]+code)(?:[ \t]+(?:code|number|no\.?))?"
    r"(?P<about>[ \t]+(?:for|to|of|on|at|from)(?:[ \t]+[\w'.-]{1,30}){1,6}?"
    r"(?=[ \t]+(?:is|was)\b|[ \t]*[:=]))?"
    r"(?:[ \t]*(?P<sep>[:=#-])|[ \t]+(?P<verb>is|was)\b(?:[ \t]*:)?|[ \t]+)[ \t]*"
    r"[\"'`]?(?P<num>[0-9]{3,4})(?![\w.,:/-]?[0-9]|\w)"
)

_CARD_NEAR = re.compile(r"(?i)\b(?:card|visa|master ?card|amex|american express|discover|debit|credit)\b")
_CVV_QUANTITY = re.compile(r"(?i)[ \t]*(?:-?[ \t]*digits?|characters?|chars?|numbers?|or|to)\b")


def _has_card_security_code(text: str, low: str, code: bool, run4: bool) -> bool:
    """`code`: whether "code" is in `low`; `run4`: whether it holds four digits in a row (an Amex
    CID has four). A CVV beside its card's number is read as part of the card."""
    words: tuple[str, ...] = ("cv", "security code") if code else ("cv",)
    words += ("cid",) if run4 else ()
    for i, _ in positions(low, words):
        if i and low[i - 1].isalnum():
            continue  # "accident", "decided": "cid" inside a word
        m = CARD_SECURITY_CODE.match(text, i)
        if not m or _CVV_QUANTITY.match(text, m.end()):
            continue
        name = m["name"].lower()
        if name.startswith(("cvv", "cvc", "cvn")):
            # "CVV 123" needs no separator, but "cvv 123 times" is no statement
            if m["sep"] or m["verb"] or m["about"] or name[-1] == "2" or _PIN_CLAUSE_END.match(text, m.end()):
                return True
            continue
        named = _CARD_NEAR.search(text, max(0, i - 60), m.end())
        if named and (m["sep"] or m["verb"]):  # "security code 404" names no card's code
            return True
    return False


# A recovery, backup or one-time code of letters and digits in groups: "the recovery code is
# 8H3K-2J9L-QQ7P", "backup codes: 4kd9-2mx1, 8zq2-77pl", "GitHub recovery code: a1b2c-3d4e5". (Codes
# of digits only are _has_access_code's.) The value must mix letters and digits and hold no word.
RECOVERY_CODE = re.compile(
    r"(?i)(?:codes?|keys?)\b"
    r"(?P<about>[ \t]+(?:for|to|of|on)(?:[ \t]+[\w'.-]{1,30}){1,3}?"
    r"(?=[ \t]+(?:is|are|was|were)\b|[ \t]*[:=]))?"
    r"(?:[ \t]*[:=]|[ \t]+(?:is|are|was|were)\b(?:[ \t]*:)?)[ \t]*[\"'`]?"
    r"(?P<value>[A-Za-z0-9]{3,10}(?:-[A-Za-z0-9]{3,10}){1,7}|[A-Za-z0-9]{8,32})(?![\w-])"
)
_RECOVERY_NAMED = re.compile(
    r"(?i)(?<![\w-])(?:recovery|backup|2fa|mfa|two[ -]?factor|2[ -]?step|one[ -]?time|otp|totp|verification"
    r"|authenticat(?:ion|or)|auth|login|sign[ -]?in|security|access|emergency|scratch|unlock)[ \t-]*$"
)
_RECOVERY_WORDS = {
    "recovery", "backup", "2fa", "mfa", "factor", "step", "time", "onetime", "otp", "totp", "verification",
    "authentication", "authenticator", "auth", "login", "in", "signin", "security", "access", "emergency",
    "scratch", "unlock",
}  # fmt: skip
_ENGLISH_WORD = re.compile(r"[A-Za-z][a-z]{3,}|[a-z]{3}")  # a word group: "step", "one", not "QQ7P"


def _has_recovery_code(text: str, low: str, code: bool, key: bool) -> bool:
    for i, _ in positions(low, ("code", "key") if code and key else ("code",) if code else ("key",)):
        prev = low[max(0, i - 16) : i].replace("-", " ").split()[-1:]
        if not (prev and prev[0] in _RECOVERY_WORDS and _RECOVERY_NAMED.search(text, max(0, i - 30), i)):
            continue  # a set lookup first, the regex to confirm
        m = RECOVERY_CODE.match(text, i)
        if not m:
            continue
        v = m["value"]
        digits = sum(c.isdigit() for c in v)
        letters = sum(c.isalpha() for c in v)
        groups = v.split("-")
        if digits < 2 or letters < 2 or any(_ENGLISH_WORD.fullmatch(g) for g in groups):
            continue
        if len(groups) == 1 and not (_looks_mixed(v) and not _UNIT_LIKE.fullmatch(v)):
            continue
        return True
    return False


_UNIT_LIKE = re.compile(
    r"(?i)[0-9]+[a-z]{1,6}|[a-z]{1,6}[0-9]{1,4}|[a-z]+[0-9]+[a-z]+"
)  # "16chars", "sha256"


def _looks_mixed(v: str) -> bool:
    """Letters and digits interleaved at least three times, as a machine-made code's are."""
    return len(re.findall(r"[A-Za-z]+|[0-9]+", v)) >= 4


def _has_bearer(text: str, low: str) -> bool:
    for i, _ in positions(low, ("bearer", "basic")):
        m = BEARER.match(text, i)
        if m and looks_random(m[1]):
            return True
    return False


# C-speed gates (bytes.translate + substring tests, ~2 us/kB) so costlier regexes run only on texts
# that could match. The shape maps UTF-8 bytes: digit -> "0", whitespace -> " ", "-" kept, other -> "x".
_SHAPE = bytes(
    48 if 48 <= b <= 57 else 32 if b in b" \t\n\r\f\v" else 45 if b == 45 else 120 for b in range(256)
)
_NON_SPACE = bytes(32 if b == 32 else 120 for b in range(256))  # applied to a shape: token bytes -> "x"
_LONG_TOKEN = b"x" * 20  # every key/token/secret shape is a run of >= 20 non-space chars
_DIGIT_GROUPS = re.compile(rb"0[ -]0")
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
    # Digit gates, one C-speed scan each. A run of 4+ digits: IBANs, cards, PINs, access codes. Digits
    # dashed: a lock's combination ("12-34-56", "4-8-2-9"). Identity and account numbers: a run of 5+,
    # digits in spaced groups ("QQ 12 34 56 C", "943 476 5919") or dashed ones ("046-454-286",
    # "529.982.247-25"; a date's "2024-01-15" is neither, and dates are in every other turn).
    run4 = b"0000" in shape
    groups = _DIGIT_GROUPS.search(shape) is not None  # one scan for the two below, mostly false
    spaced = groups and b"00 00" in shape
    dashed = groups and b"0-0" in shape
    numbers = (
        (run4 and b"00000" in shape) or spaced or (dashed and (b"000-000" in shape or b"0x000-00" in shape))
    )
    card = run4 and any(g in shape for g in _CARD_SHAPES) and has_card(text)
    # A card split over lines or grouped oddly ("4111 1111\n1111 1111", "card: 41 11 11 ..."): digit
    # groups beside each other, a line break (two spaces in the shape: "\r\n") or dots between them.
    card = (
        card or (run4 or spaced) and (groups or b"0  0" in shape or b"0x0" in shape) and has_split_card(text)
    )
    code, key, cred = "code" in low, "key" in low, "cred" in low  # shared by several rules below
    # A variable's or a cookie's "=", a program's flags ("-p", "--password"): where a command line
    # can hold a password. A TOTP seed is named a secret, seed or key, or passed to TOTP(...).
    eq = "=" in text
    command = eq or " -" in text
    seedlike = key or "secret" in low or "seed" in low or "otp" in low
    checks = (
        ("api_key", bool(tokens) and has_provider_token(tokens)),
        ("jwt", long_token and "eyj" in low and JWT.search(text) is not None),
        ("private_key", _has_private_key(text, low, tokens)),
        ("bearer_token", basic and has_basic_credentials(text, low)),
        ("bearer_token", long_token and (basic or "bearer" in low) and _has_bearer(text, low)),
        ("card_number", card),
        ("ssn", b"000-00-0000" in shape and has_ssn(text)),
        ("pin", "pin" in low and _has_pin(text, low)),
        ("pin", (run4 or spaced or dashed) and _has_access_code(text, low, code)),
        ("pin", (code or key) and _has_recovery_code(text, low, code, key)),
        ("card_security_code", not card and _has_card_security_code(text, low, code, run4)),
        (
            "passphrase",
            ("phrase" in low or "mnemonic" in low or "seed" in low or "passw" in low)
            and has_passphrase(text, low),
        ),
        ("password", command and has_command_password(text, low)),
        ("session_cookie", (eq or "cookie" in low) and has_session_cookie(text, low)),
        ("otp_seed", seedlike and has_otp_seed(text, low)),
        (
            "crypto_private_key",
            long_token and (has_private_key_string(tokens) or has_named_raw_key(text, low)),
        ),
        # (a US Medicare identifier has no run of digits: "1EG4-TE5-MK73" ends letters then two digits)
        (
            "medical_record",
            (numbers or dashed or spaced or b"xx00" in shape) and has_medical_record(text, low),
        ),
        ("bank_account", run4 and b"xx00" in shape and has_iban(text, low, shape)),
        ("bank_account", numbers and ("acc" in low or "a/c" in low) and has_bank_account(text, low)),
    )
    shapes = list(dict.fromkeys(name for name, hit in checks if hit))
    if numbers or (run4 and "PAN" in text):  # an Indian PAN has four digits: "ABCPE1234F"
        shapes += sorted(id_number_shapes(text, low) - set(shapes))
    shapes += sorted(assignment_shapes(text, low, key, cred) - set(shapes))
    if "password" not in shapes and has_stated_credential(text, low, key, cred):
        shapes.append("password")
    if "password" not in shapes and has_language_password(text, low):
        shapes.append("password")
    if not shapes and tokens:  # last resorts, costlier and only for an otherwise clean text
        if has_secret_statement(text, low):
            shapes.append("secret_assignment")
        elif any(not names_other_value(text, at) for at in aws_secret_positions(text, tokens)):
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
    rest = _TOKEN_REST.match(text, end) if end < len(text) else None  # it matches the empty string too
    stop = rest.end() if rest is not None else end
    return is_high(text[:stop])
