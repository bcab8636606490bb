"""Tokens, for `pipelines.screening`: token formats of widely used providers (the table is
`data/tokens.toml`), Discord bot tokens, webhook URLs, AWS secret keys, private-key bodies and HTTP
Basic credentials.

Each token format is a known prefix (or structure) plus a body that must also look random, so prose
that happens to start with a prefix ("sk-learn", "key-value", "AC-130") is not read as a key. The
table is matched only against whitespace-free runs of 20+ chars, which ordinary chat rarely holds,
so its size costs ordinary turns nothing.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator

from pipelines.screening.tables import table
from pipelines.screening.text import shannon_entropy, word_coverage

_L = r"(?<![\w-])"  # the token starts a run: not "monkey-..." or "task_..."
_R = r"(?![\w-])"  # and ends it: a fixed-length body must not be the start of a longer run

# One capturing group per format: the part that must look random (the prefix alone proves nothing).
FORMATS: tuple[str, ...] = tuple(table("tokens")["formats"])
# Most formats start a run: one shared lookbehind lets the engine skip every position inside a word
# at once instead of trying ~70 alternatives there (a 10 kB run of one token costs ~1 ms, not ~10).
_STARTING = "|".join(f"(?:{f.removeprefix(_L)})" for f in FORMATS if f.startswith(_L))
_OTHERS = "|".join(f"(?:{f})" for f in FORMATS if not f.startswith(_L))
PROVIDER_TOKEN = re.compile(f"{_L}(?:{_STARTING})|{_OTHERS}")

# Obviously made-up bodies. Longer runs only: a random 40-char body holds any 4-char word with odds
# of about 1e-5, so "xxxx" or "example" in one marks documentation, not chance.
_PLACEHOLDERS = ("xxxx", "example", "your", "placeholder", "redacted", "dummy", "sample", "...", "***")
_SLUG = re.compile(r"(?:[A-Za-z][a-z]*|[A-Z]+|\d+)(?:[-_./](?:[A-Za-z][a-z]*|[A-Z]+|\d+))+")


def random_body(body: str, min_entropy: float = 3.0) -> bool:
    """Two of lower/upper/digit (or one, long and varied: 4 % of AWS key ids have no digit), not a
    hyphenated phrase ("sk-learn-Compatible-API"), not a stand-in, and >= 3.0 bits/char: rules out
    "sk-xxxx...", "sk-1111..."; real bodies are random (~3.6 bits hex, ~4+ base62)."""
    classes = sum(bool(re.search(c, body)) for c in ("[a-z]", "[A-Z]", "[0-9]"))
    low = body.lower()
    varied = len(body) >= 16 and word_coverage(body) < 0.5 and shannon_entropy(body) >= 3.2
    return (
        (classes >= 2 or varied)
        and not _SLUG.fullmatch(body)
        and not any(p in low for p in _PLACEHOLDERS)
        and word_coverage(body) < 0.7  # a name after the prefix: "rnd_generatorStateInitialValue2024"
        and shannon_entropy(body) >= min_entropy
    )


# Discord bot token: base64 of the bot's numeric user id, a timestamp, an HMAC.
DISCORD_BOT = re.compile(rf"{_L}([MNO][\w-]{{23,27}})\.[\w-]{{6}}\.([\w-]{{27,40}}){_R}")


def _discord_bot_token(m: re.Match[str]) -> bool:
    user_id = m[1] + "=" * (-len(m[1]) % 4)
    try:
        return base64.urlsafe_b64decode(user_id).isdigit() and random_body(m[2])
    except (binascii.Error, ValueError):
        return False


# Webhook URLs: the path is evidence enough, so the secret part need only not be a stand-in
# ("T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX" in Slack's docs); it may be one letter case.
WEBHOOK = re.compile(
    r"hooks\.slack\.com/(?:services|workflows|triggers)/T[A-Z0-9]{6,12}/[A-Z0-9]{6,12}/(?:\d{6,20}/)?"
    r"([A-Za-z0-9]{16,64})(?![\w-])"  # Slack
    r"|discord(?:app)?\.com/api/webhooks/\d{15,20}/([\w-]{60,80})(?![\w-])"  # Discord
    r"|webhook\.office\.com/webhookb2/[\w@-]{30,80}/IncomingWebhook/([0-9a-f]{32})/"  # Microsoft Teams
)


def _webhook_secret(m: re.Match[str]) -> bool:
    body = m.group(m.lastindex or 0)
    return not any(p in body.lower() for p in _PLACEHOLDERS) and shannon_entropy(body) >= 3.0


def has_provider_token(tokens: list[str]) -> bool:
    """Any of `tokens` (whitespace-free runs) holds a provider-format token with a random body."""
    for token in tokens:
        for m in PROVIDER_TOKEN.finditer(token):
            if random_body(m.group(m.lastindex or 0)):
                return True
        if "." in token and any(_discord_bot_token(m) for m in DISCORD_BOT.finditer(token)):
            return True
        if "hook" in token and any(_webhook_secret(m) for m in WEBHOOK.finditer(token)):
            return True
    return False


# --- AWS secret access key: 40 chars of base64 with no prefix at all ------------------------------
AWS_SECRET = re.compile(r"(?<![\w+/=.-])[A-Za-z0-9+/]{40}(?![\w+/=-])")


def aws_secret_shape(v: str) -> bool:
    """Upper, lower and digits (all three: P(a random 40-char key lacks one) ~ 1e-3), not hex, not
    made of words, and near-maximal entropy (random 40-char base64: mean 4.8 bits, 0.1th pct 4.3)."""
    return (
        bool(re.search("[a-z]", v) and re.search("[A-Z]", v) and re.search("[0-9]", v))
        and not re.fullmatch("[0-9a-fA-F]+", v)
        and word_coverage(v) < 0.5
        and not any(p in v.lower() for p in _PLACEHOLDERS)
        and shannon_entropy(v) >= 4.0
    )


def aws_secret_positions(text: str, tokens: list[str]) -> Iterator[int]:
    """Where `text` holds a 40-char run shaped like an AWS secret access key (the caller judges the
    words before it: "request id ..." names an id)."""
    for token in tokens:
        for m in AWS_SECRET.finditer(token):
            if aws_secret_shape(m.group()) and not token.startswith("base64,", m.start() - 7):
                yield text.find(m.group())  # not a tiny inline image: data:image/gif;base64,...


# --- private-key bodies without their BEGIN line ------------------------------------------------
# DER of a private key opens SEQUENCE { INTEGER version 0 or 1, ... } (PKCS#1 RSA/DSA, PKCS#8, SEC1
# EC; version 3 is a PKCS#12 bundle) or SEQUENCE { SEQUENCE { PBES2 / PKCS#12 OID } } (encrypted
# PKCS#8). A certificate, CSR, public key or CRL opens SEQUENCE { SEQUENCE ... } with no such OID, a
# CMS signature SEQUENCE { OID ... }, so they stay unflagged. In base64 a DER SEQUENCE starts with
# "M"; an OpenSSH private key with "openssh-key-v1\0".
PEM_BODY = re.compile(r"(?:(?<![A-Za-z0-9+/])|(?<=\\n))(M[A-Za-z0-9+/]{39}|b3BlbnNzaC1rZXktdjE)")
_ENCRYPTION_OIDS = (b"\x2a\x86\x48\x86\xf7\x0d\x01\x05", b"\x2a\x86\x48\x86\xf7\x0d\x01\x0c\x01")


def der_private_key(b64: str) -> bool:
    """Whether 40 base64 chars open the DER encoding of a private key."""
    try:
        der = base64.b64decode(b64[:40], validate=True)
    except (binascii.Error, ValueError):
        return False
    if der[0] != 0x30 or der[1] == 0x80 or der[1] > 0x83:
        return False
    rest = der[2 if der[1] < 0x80 else 2 + (der[1] & 0x7F) :]
    if rest[:3] in (b"\x02\x01\x00", b"\x02\x01\x01", b"\x02\x01\x03"):
        return True
    return rest[:1] == b"\x30" and any(oid in rest[:20] for oid in _ENCRYPTION_OIDS)


_PEM_LINE = re.compile(r"[A-Za-z0-9+/]{64}")


def has_pem_body(tokens: list[str]) -> bool:
    for i, token in enumerate(tokens):
        for m in PEM_BODY.finditer(token):
            if m.group().startswith("b3Bl") or der_private_key(m.group()):
                return True
        # Two PEM-wrapped lines of a long DER structure ("MII") that is not a certificate, CSR,
        # public key or CRL (SEQUENCE), CMS (OID) or OCSP (ENUMERATED) one: a key with a body we
        # cannot parse, e.g. one whose first line was cut.
        if token.startswith("MII") and i + 1 < len(tokens) and _PEM_LINE.fullmatch(token):
            second = base64.b64decode(token[:8])[4]  # the tag inside the outer SEQUENCE
            if _PEM_LINE.fullmatch(tokens[i + 1]) and second not in (0x30, 0x06, 0x0A):
                return True
    return False


# --- short HTTP Basic credentials: base64 of "user:password" ------------------------------------
BASIC = re.compile(r"(?i)\bbasic[ \t]+([A-Za-z0-9+/]{4,200}={0,2})(?![\w+/=])")


def has_basic_credentials(text: str, low: str) -> bool:
    i = low.find("basic")
    while i != -1:
        m = BASIC.match(text, i)
        i = low.find("basic", i + 1)
        try:
            raw = base64.b64decode(m.group(1), validate=True).decode("utf-8") if m else ""
        except (binascii.Error, ValueError):  # UnicodeDecodeError is a ValueError
            continue
        user, sep, password = raw.partition(":")
        if sep and user and password and raw.isprintable():
            return True
    return False
