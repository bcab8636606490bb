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
identity-document numbers live in `pipelines.screening.formats`; passwords told in prose or assigned
in code in `pipelines.screening.statements` (with wifi keys, login pairs and security answers), and in
the other languages of Europe in `pipelines.screening.languages`; passphrases and seed phrases in
`pipelines.screening.phrases`; passwords on a command line and session cookies in
`pipelines.screening.commands`; TOTP seeds and cryptocurrency private keys in `pipelines.screening.keys`;
cards split over lines and medical record numbers in `pipelines.screening.numbers`. PINs, the codes
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

from pipelines.screening.normalising import normalise
from pipelines.screening.verdict import (
    EXCERPT_LOOKAHEAD,
    HIGH,
    NONE,
    RULES_VERSION,
    Screen,
    excerpt_is_high,
    is_high,
    screen,
)

__all__ = [
    "EXCERPT_LOOKAHEAD",
    "HIGH",
    "NONE",
    "RULES_VERSION",
    "Screen",
    "excerpt_is_high",
    "is_high",
    "normalise",
    "screen",
]
