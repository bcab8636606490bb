"""Formats of secrets and personal numbers, for `pipelines.screening`: token formats of widely used
providers, AWS secret keys, private-key bodies, HTTP Basic credentials, card numbers, SSNs, IBANs
(mod-97 checked, any country), bank account numbers (stated, with a bank named nearby) and
identity-document numbers stated after their name (passport, driving licence, national ID card,
UK National Insurance, Canadian SIN (Luhn), US tax ids, Aadhaar (Verhoeff), NHS (mod 11), Spanish
DNI/NIE (check letter), Brazilian CPF, Dutch BSN, Polish PESEL (check digits)).

Each token format is a known prefix (or structure) plus a body that must also look random, so prose
that happens to start with a prefix ("sk-learn", "key-value", "AC-130") is not read as a key. The
table is matched only against whitespace-free runs of 20+ chars, which ordinary chat rarely holds,
so its size costs ordinary turns nothing.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Iterator

_L = r"(?<![\w-])"  # the token starts a run: not "monkey-..." or "task_..."
_R = r"(?![\w-])"  # and ends it: a fixed-length body must not be the start of a longer run

# One capturing group per format: the part that must look random (the prefix alone proves nothing).
FORMATS: tuple[str, ...] = (
    # AI providers: OpenAI sk- / sk-proj- / sk-svcacct-, Anthropic sk-ant-api03-, DeepSeek, OpenRouter
    rf"{_L}sk-(?:ant-|proj-|svcacct-|admin-)?([\w-]{{20,300}}){_R}",
    rf"{_L}sess-([A-Za-z0-9]{{40}}){_R}",  # OpenAI browser session
    rf"{_L}(?:hf|api_org)_([A-Za-z0-9]{{30,40}}){_R}",  # Hugging Face
    rf"{_L}(?:gsk|pcsk)_([\w]{{40,100}}){_R}",  # Groq, Pinecone
    rf"{_L}(?:xai|pplx|tvly(?:-dev)?)-([A-Za-z0-9]{{30,100}}){_R}",  # xAI, Perplexity, Tavily
    rf"{_L}r8_([A-Za-z0-9]{{37}}){_R}",  # Replicate
    rf"{_L}lsv2_(?:pt|sk)_([0-9a-f]{{32}}_[0-9a-f]{{10}}){_R}",  # LangSmith
    rf"{_L}sk_([0-9a-f]{{48}}){_R}",  # ElevenLabs
    # Code hosting, registries, CI
    rf"{_L}gh[pousr]_([A-Za-z0-9]{{36,255}}){_R}",  # GitHub classic
    rf"{_L}github_pat_(\w{{50,255}}){_R}",  # GitHub fine-grained
    rf"{_L}gl(?:pat|dt|rt|ptt|ft|cbt|imt|oas|soat|ffct|agent)-([\w-]{{20,100}}){_R}",  # GitLab
    rf"{_L}ATBB([\w=.-]{{32,100}}){_R}",  # Bitbucket app password
    rf"{_L}AT[AC]TT3([\w=-]{{50,300}}){_R}",  # Atlassian (Jira, Confluence) API token
    rf"{_L}npm_([A-Za-z0-9]{{36}}){_R}",
    rf"{_L}pypi-(AgE[\w-]{{50,300}}){_R}",  # PyPI and TestPyPI macaroons
    rf"{_L}rubygems_([0-9a-f]{{48}}){_R}",
    rf"{_L}oy2([a-z0-9]{{43}}){_R}",  # NuGet
    rf"{_L}dckr_pat_([\w-]{{27,40}}){_R}",  # Docker Hub
    rf"{_L}bkua_([0-9a-f]{{40}}){_R}",  # Buildkite
    rf"{_L}pul-([0-9a-f]{{40}}){_R}",  # Pulumi
    rf"{_L}[A-Za-z0-9]{{14}}\.atlasv1\.([\w=-]{{60,120}}){_R}",  # Terraform Cloud
    rf"{_L}hv[sbr]\.([\w-]{{24,200}}){_R}",  # HashiCorp Vault
    rf"{_L}dp\.(?:pt|st|sa|ct|scim|audit)\.([A-Za-z0-9]{{40,44}}){_R}",  # Doppler
    rf"{_L}sha256~([\w-]{{43}}){_R}",  # OpenShift
    # Cloud
    rf"{_L}(?:AKIA|ASIA)([0-9A-Z]{{16}}){_R}",  # AWS access key id
    r"(?<![\w+/=-])(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdz)([A-Za-z0-9+/=]{60,2000})",  # AWS session token
    rf"{_L}AIza([\w-]{{35}}){_R}",  # Google API key
    rf"{_L}GOCSPX-([\w-]{{28}}){_R}",  # Google OAuth client secret
    rf"{_L}ya29\.([\w-]{{30,2000}}){_R}",  # Google OAuth access token
    r"(?<![\w/-])1//0([\w-]{40,300})(?![\w-])",  # Google OAuth refresh token
    r"(?:AccountKey|SharedAccessKey|SharedSecretValue)=([A-Za-z0-9+/]{40,100}={0,2})",  # Azure
    r"(?<![\w~.-])[\w~.-]{3}\dQ~([\w~.-]{31,34})(?![\w~.-])",  # Azure AD (Entra) client secret
    rf"{_L}do[opr]_v1_([0-9a-f]{{64}}){_R}",  # DigitalOcean
    rf"{_L}HRKU-([\w-]{{40,80}}){_R}",  # Heroku
    rf"{_L}dapi([0-9a-f]{{32}})(?:-\d)?{_R}",  # Databricks
    rf"{_L}LTAI([A-Za-z0-9]{{12,20}}){_R}",  # Alibaba Cloud
    rf"{_L}AKID([A-Za-z0-9]{{32}}){_R}",  # Tencent Cloud
    rf"{_L}(?:sbp_([0-9a-f]{{40}})|sb_secret_([\w-]{{30,60}})){_R}",  # Supabase
    rf"{_L}(?:nfp|fo1|figd|rnd)_([\w-]{{28,64}}){_R}",  # Netlify, Fly.io, Figma, Render
    rf"{_L}pscale_(?:tkn|pw|oauth)_([\w.-]{{32,64}}){_R}",  # PlanetScale
    rf"{_L}dt0c01\.[A-Z0-9]{{24}}\.([A-Z0-9]{{64}}){_R}",  # Dynatrace
    rf"{_L}NR(?:AK|II|JS|RA)-([A-Za-z0-9]{{27,42}}){_R}",  # New Relic
    rf"{_L}glc_([A-Za-z0-9+/]{{32,400}}={{0,2}})|{_L}glsa_([A-Za-z0-9]{{32}}_[0-9a-f]{{8}}){_R}",  # Grafana
    rf"{_L}sntry[suo]_([\w=+/]{{40,300}})",  # Sentry
    # Messaging and webhooks
    rf"{_L}(?:xox[abcdeprs]|xapp|xoxe\.xox[bp])-([A-Za-z0-9-]{{20,300}}){_R}",  # Slack tokens
    r"(?<![\w:.-])\d{6,12}:([\w-]{35})(?![\w-])",  # Telegram bot token
    rf"{_L}AAAA[\w-]{{7}}:(APA91b[\w-]{{100,200}}){_R}",  # Firebase Cloud Messaging server key
    rf"{_L}SG\.([\w-]{{22}}\.[\w-]{{43}}){_R}",  # SendGrid
    rf"{_L}(?:SK|AC)([0-9a-f]{{32}}){_R}",  # Twilio API key / account SIDs
    rf"{_L}key-([0-9a-f]{{32}}){_R}",  # Mailgun (old)
    rf"{_L}([0-9a-f]{{32}}-[0-9a-f]{{8}}-[0-9a-f]{{8}}){_R}",  # Mailgun (new)
    rf"{_L}([0-9a-f]{{32}})-us\d{{1,2}}{_R}",  # Mailchimp
    rf"{_L}xkeysib-([0-9a-f]{{64}}-[A-Za-z0-9]{{16}}){_R}",  # Brevo (Sendinblue)
    rf"{_L}PMAK-([0-9a-f]{{24}}-[0-9a-f]{{34}}){_R}",  # Postman
    rf"{_L}lin_(?:api|oauth)_([A-Za-z0-9]{{40}}){_R}",  # Linear
    rf"{_L}(?:secret|ntn)_([A-Za-z0-9]{{43,46}}){_R}",  # Notion
    rf"{_L}pat[A-Za-z0-9]{{14}}\.([0-9a-f]{{64}}){_R}",  # Airtable
    rf"{_L}pat-(?:na|eu)\d-([0-9a-f-]{{36}}){_R}",  # HubSpot
    rf"{_L}CFPAT-([\w-]{{43}}){_R}",  # Contentful
    rf"{_L}sl\.(?:u\.)?([\w-]{{120,1500}}){_R}",  # Dropbox
    rf"{_L}sk\.(eyJ[\w-]{{50,}}\.[\w-]{{20,}}){_R}",  # Mapbox secret token
    r"(?<![A-Za-z0-9%])A{22}([A-Za-z0-9%]{30,200})",  # Twitter / X app bearer token
    rf"{_L}EAA[A-Za-z0-9]([\w-]{{60,400}}){_R}",  # Facebook / Meta, Square access tokens
    rf"{_L}AGE-SECRET-KEY-1([0-9A-Z]{{58}}){_R}",  # age
    # Payments
    rf"{_L}(?:[spr]k_(?:live|test)|whsec)_([A-Za-z0-9]{{16,255}}){_R}",  # Stripe (and Paystack)
    rf"{_L}sq0(?:atp|csp|idp)-([\w-]{{22,43}}){_R}",  # Square
    rf"{_L}shp(?:at|ss|ca|pa)_([0-9a-fA-F]{{32}}){_R}",  # Shopify
    rf"{_L}shippo_(?:live|test)_([0-9a-f]{{40}}){_R}",
    rf"{_L}FLWSECK(?:_TEST)?-([0-9a-f]{{32}})-X{_R}",  # Flutterwave
    r"access_token\$production\$[0-9a-z]{16}\$([0-9a-f]{32})",  # PayPal Braintree
)
# Most formats start a run: one shared lookbehind lets the engine skip every position inside a word
# at once instead of trying ~70 alternatives there (a 10 kB run of one token costs ~1 ms, not ~10).
_STARTING = "|".join(f"(?:{f.removeprefix(_L)})" for f in FORMATS if f.startswith(_L))
_OTHERS = "|".join(f"(?:{f})" for f in FORMATS if not f.startswith(_L))
PROVIDER_TOKEN = re.compile(f"{_L}(?:{_STARTING})|{_OTHERS}")

# Obviously made-up bodies. Longer runs only: a random 40-char body holds any 4-char word with odds
# of about 1e-5, so "xxxx" or "example" in one marks documentation, not chance.
_PLACEHOLDERS = ("xxxx", "example", "your", "placeholder", "redacted", "dummy", "sample", "...", "***")
_SLUG = re.compile(r"(?:[A-Za-z][a-z]*|[A-Z]+|\d+)(?:[-_./](?:[A-Za-z][a-z]*|[A-Z]+|\d+))+")
_WORDISH = re.compile(r"[A-Z]?[a-z]{3,}")


def positions(low: str, words: tuple[str, ...]) -> Iterator[tuple[int, str]]:
    """Every position of each of `words` in `low` (a C-speed find, so a rule matches only there)."""
    for word in words:
        i = low.find(word)
        while i != -1:
            yield i, word
            i = low.find(word, i + 1)


def word_coverage(v: str) -> float:
    """The share of `v` in runs of 3+ letters that have a vowel per 5 letters, as words have: names
    such as "recommendationEngineV2" score ~0.9. Random base62 has lowercase runs too, but vowel-poor
    ones ("Dfiycd"): at < 0.5 this rejects 1.2 % of random 20-char keys, 0.1 % of 40-char ones."""
    words = (w for w in _WORDISH.findall(v) if 5 * sum(c in "aeiouAEIOU" for c in w) >= len(w))
    return sum(map(len, words)) / len(v)


def shannon_entropy(s: str) -> float:
    """Bits per character of `s` under its own character frequencies."""
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values()) if n else 0.0


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


def luhn_valid(digits: str) -> bool:
    doubled = (int(c) * (1 + i % 2) for i, c in enumerate(reversed(digits)))  # every second from the right
    return sum(d - 9 if d > 9 else d for d in doubled) % 10 == 0


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


# --- IBANs: country, two check digits, the national account number; ISO 13616 mod 97 == 1 ----------
# Lengths from the SWIFT IBAN registry: with the checksum only 1 in ~97 strings of the right
# country and length passes, and ordinary text holds almost none of those.
IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BI": 27,
    "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27, "DK": 18, "DO": 28,
    "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
    "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27,
    "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25,
    "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18,
    "NO": 15, "OM": 23, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33,
    "SA": 24, "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25, "SV": 28,
    "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}  # fmt: skip
IBAN = re.compile(  # "DE89 3704 0044 0532 0130 00" or "DE89370400440532013000"
    r"(?<![A-Za-z0-9])[A-Z]{2}[0-9]{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,4})?(?![A-Za-z0-9])"
)
IBAN_ANY_CASE = re.compile(IBAN.pattern, re.IGNORECASE)  # typed in lower case, named "IBAN" nearby


def iban_valid(iban: str) -> bool:
    s = iban.replace(" ", "").upper()
    if IBAN_LENGTHS.get(s[:2]) != len(s) or not s.isalnum() or len(set(s[4:])) < 3:
        return False
    return int("".join(str(int(c, 36)) for c in s[4:] + s[:4])) % 97 == 1


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
_VERHOEFF_D = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9), (1, 2, 3, 4, 0, 6, 7, 8, 9, 5), (2, 3, 4, 0, 1, 7, 8, 9, 5, 6),
    (3, 4, 0, 1, 2, 8, 9, 5, 6, 7), (4, 0, 1, 2, 3, 9, 5, 6, 7, 8), (5, 9, 8, 7, 6, 0, 4, 3, 2, 1),
    (6, 5, 9, 8, 7, 1, 0, 4, 3, 2), (7, 6, 5, 9, 8, 2, 1, 0, 4, 3), (8, 7, 6, 5, 9, 3, 2, 1, 0, 4),
    (9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
)  # fmt: skip
_VERHOEFF_P: list[tuple[int, ...]] = [(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), (1, 5, 7, 6, 2, 8, 3, 0, 9, 4)]
for _ in range(6):
    _VERHOEFF_P.append(tuple(_VERHOEFF_P[1][x] for x in _VERHOEFF_P[-1]))


def _verhoeff_valid(digits: str) -> bool:
    c = 0
    for i, ch in enumerate(reversed(digits)):
        c = _VERHOEFF_D[c][_VERHOEFF_P[i % 8][int(ch)]]
    return c == 0


def _weighted_mod(digits: str, weights: tuple[int, ...], mod: int) -> int:
    return sum(int(c) * w for c, w in zip(digits, weights, strict=False)) % mod


def _cpf_valid(d: str) -> bool:
    if len(d) != 11 or len(set(d)) == 1:
        return False
    first = (10 * sum(int(c) * w for c, w in zip(d[:9], range(10, 1, -1), strict=True))) % 11 % 10
    second = (10 * sum(int(c) * w for c, w in zip(d[:10], range(11, 1, -1), strict=True))) % 11 % 10
    return d[9:] == f"{first}{second}"


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
        return len(value) == 12 == digits and value[0] not in "01" and _verhoeff_valid(value)
    if kind == "pan":
        return bool(_PAN.fullmatch(value))
    if kind == "nhs":
        check = (11 - _weighted_mod(value, (10, 9, 8, 7, 6, 5, 4, 3, 2), 11)) % 11
        return len(value) == 10 == digits and check != 10 and int(value[9]) == check
    if kind == "dni":
        if not _DNI.fullmatch(value):
            return False
        number = int(str("XYZ".find(value[0])) + value[1:8] if value[0] in "XYZ" else value[:8])
        return "TRWAGMYFPDXBNJZSQVHLCKE"[number % 23] == value[8]
    if kind == "cpf":
        return _cpf_valid(value)
    if kind == "bsn":
        return len(value) == 9 == digits and _weighted_mod(value, (9, 8, 7, 6, 5, 4, 3, 2, -1), 11) == 0
    if kind == "pesel":
        check = (10 - _weighted_mod(value, (1, 3, 7, 9, 1, 3, 7, 9, 1, 3), 10)) % 10
        return len(value) == 11 == digits and int(value[10]) == check
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
