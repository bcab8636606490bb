"""Sensitivity screening: does a turn's text hold a *high* shape (a secret or a personal number)?

A high turn is stored as written but never embedded, never sent to a model and never returned by
search. A false positive silently hides an ordinary turn, so each shape is paired with checks that
keep precision: provider prefixes need random-looking bodies, assignments must assign a literal
(not a variable, type, env lookup or placeholder), card numbers need an issuer prefix and Luhn, etc.

Pure stdlib and fast, since it runs inline on every write (~0.1-0.5 ms per 10 kB): each check is
gated by substring tests at C speed, keyword rules match only where the keyword occurs, and every
repeat is bounded or possessive with nothing nested, so there is no catastrophic backtracking.

Rules run on a normalised copy (`normalising`: NFKC, invisible characters removed, Unicode spaces
made plain), so fullwidth letters, zero-width joiners or no-break spaces do not hide a secret. Each
family of shapes is a module of this package: provider token formats, private-key bodies and Basic
credentials in `tokens`; cards, SSNs, IBANs, bank account numbers and identity-document numbers in
`formats`; passwords told in prose in `statements` (what makes a value a password: `passwords`),
secrets assigned in code or named in prose in `assignments`, wifi keys, login pairs and security
answers in `credentials`, and passwords in the other languages of Europe in `languages`;
passphrases and seed phrases in `phrases`; passwords on a command line and session cookies in
`commands`; TOTP seeds and cryptocurrency private keys in `keys`; cards split over lines and
medical record numbers in `numbers`; PINs, the codes that open things (alarm, door, safe, phone
unlock), recovery codes and card security codes in `codes`. Their word lists and pattern tables
are data, in `data/*.toml` (read by `tables`).

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

The verdict is here, in the package itself (the gates that choose which rules run, and the shapes
gathered), so that `screen`, `is_high` and `excerpt_is_high` are one module's: replacing
`pipelines.screening.screen` (as the re-screening tests do) changes what the other two judge.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipelines.screening.assignments import has_secret_statement, looks_random, names_other_value
from pipelines.screening.codes import has_access_code, has_card_security_code, has_pin, has_recovery_code
from pipelines.screening.commands import has_command_password, has_session_cookie
from pipelines.screening.credentials import has_stated_credential
from pipelines.screening.formats import (
    has_bank_account,
    has_card,
    has_iban,
    has_ssn,
    id_number_shapes,
)
from pipelines.screening.keys import has_named_raw_key, has_otp_seed, has_private_key_string
from pipelines.screening.languages import has_language_password
from pipelines.screening.normalising import GLUED_SPACE, normalise
from pipelines.screening.numbers import has_medical_record, has_split_card
from pipelines.screening.phrases import has_passphrase
from pipelines.screening.statements import assignment_shapes
from pipelines.screening.text import positions
from pipelines.screening.tokens import (
    aws_secret_positions,
    has_basic_credentials,
    has_pem_body,
    has_provider_token,
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


# --- tokens: provider formats are in pipelines.screening.tokens; these are the generic shapes -------
JWT = re.compile(r"eyJ(?<![\w-]eyJ)[\w-]{8,}+\.eyJ[\w-]{8,}+\.[\w-]{16}")  # header.payload.signature
PRIVATE_KEY = re.compile(r"-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----")
_PEM_BODY = re.compile(r"[A-Za-z0-9+/]{40,}")  # a real block has base64 lines; "..." does not
BEARER = re.compile(r"\b(?:[Bb]earer|Basic)[ \t]+([\w.~+/-]{20,300}+=*+)(?![\w.~+/-])")


def _has_private_key(text: str, low: str, tokens: list[str]) -> bool:
    if "private" in low:
        if "private key" in low and any(
            _PEM_BODY.search(text, m.end(), m.end() + 400) for m in PRIVATE_KEY.finditer(text)
        ):
            return True
        if "private-lines" in low and "putty-user-key-file" in low:
            return True
    return bool(tokens) and has_pem_body(tokens)  # a body pasted without its BEGIN line


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


def screen(text: str) -> Screen:
    shapes = _shapes(normalise(text))
    if not text.isascii() and GLUED_SPACE.search(text):
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
        ("pin", "pin" in low and has_pin(text, low)),
        ("pin", (run4 or spaced or dashed) and has_access_code(text, low, code)),
        ("pin", (code or key) and has_recovery_code(text, low, code, key)),
        ("card_security_code", not card and has_card_security_code(text, low, code, run4)),
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
