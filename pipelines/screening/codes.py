"""Codes stated like a password, for `pipelines.screening`: a PIN, a code that opens something (an
alarm, a door, a safe, a phone), a card's security code, and a recovery or backup code of letters
and digits. Each is read only where its name is found, and only with the words around it that make
it a code rather than a count, a postal code, a date or an error number."""

from __future__ import annotations

import re

from pipelines.screening.text import positions

# --- PINs: a PIN needs the words around it
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


def has_pin(text: str, low: str) -> bool:
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


def has_access_code(text: str, low: str, code: bool) -> bool:
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


def has_card_security_code(text: str, low: str, code: bool, run4: bool) -> bool:
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
# of digits only are has_access_code's.) The value must mix letters and digits and hold no word.
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


def has_recovery_code(text: str, low: str, code: bool, key: bool) -> bool:
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
