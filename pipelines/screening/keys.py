"""Keys that are secrets by what they open, for `pipelines.screening`: a TOTP/HOTP seed (base32,
stated in prose or code after its name, or the ``secret`` of an ``otpauth://`` URI) and a
cryptocurrency private key: WIF (base58check, version 0x80 or 0xef, checksum verified), BIP-32
extended private keys (xprv, tprv, yprv, zprv...), BIP-38 encrypted keys (6P...), and raw keys (64
hex digits, 0x-prefixed or not, or base58 of a 64-byte key) named as a private key or a wallet's
secret key. A base58check string proves itself (a random one passes the checksum once in 2^32); a
raw hex value is named or nothing: a git SHA-256, a transaction or block hash and a checksum are 64
hex digits too, and are named as such. Pure stdlib.
"""

from __future__ import annotations

import hashlib
import re

from pipelines.screening.text import positions, shannon_entropy, word_coverage

# --- TOTP/HOTP seeds -------------------------------------------------------------------------------
_B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
# Where a seed's name can start: "TOTP secret", "2FA seed", "MFA secret key", "authenticator setup
# key", "two-factor secret", "Authy seed", "setup key".
_OTP_WORDS = ("otp", "2fa", "mfa", "factor", "authenticat", "authy", "setup key")
_OTP_GATES = ("otp", "2fa", "mfa", "factor", "auth", "setup key")  # one C-speed scan each
OTP_SEED = re.compile(
    r"(?i)[\w-]{0,16}(?P<words>(?:[ \t]+[\w'.-]{1,30}){0,5}?)"
    r"(?:[\"']?[ \t]*(?P<sep>[:=])|[ \t]+(?P<verb>is|was|are)\b(?:[ \t]*:)?|\((?=[\"'])|(?=[ \t]))"
    r"[ \t]*[\"'`]?"
    r"(?P<value>(?-i:[A-Z2-7]{4}(?:[ ][A-Z2-7]{4}){3,15}|[a-z2-7]{4}(?:[ ][a-z2-7]{4}){3,15}"
    r"|[A-Z2-7]{16,128}|[a-z2-7]{16,128}))=*(?![\w+/-])"
)
_SEED_NOUN = re.compile(r"(?i)secret|seed|(?<![a-z])key")
_NOT_SEED_WORDS = re.compile(r"(?i)\b(?:hash|id|name|length|format|example|sample|public)\b")
_OTPAUTH_SECRET = re.compile(r"(?i)[?&]secret=([A-Za-z2-7]{16,128})(?:%3D|=)*(?![\w%+/-])")


def otp_seed_ok(value: str) -> bool:
    """Base32 of 80+ bits that looks random: not a run of the alphabet, a repeat, or words."""
    v = value.replace(" ", "").upper().rstrip("=")
    if len(v) < 16 or len(set(v)) < 8 or v in _B32 * 2 or shannon_entropy(v) < 3.0:
        return False
    # Base32 is mostly letters, so a random seed has vowels enough to pass for words now and then;
    # one with two of its six digits is read as random, one with fewer must not look made of words.
    words_ok = sum(c in "234567" for c in v) >= 2 or word_coverage(v.lower()) < 0.5
    return words_ok and not any(p in v for p in ("XXXX", "EXAMPLE", "SECRET"))


def has_otp_seed(text: str, low: str) -> bool:
    gates = [w for w in _OTP_GATES if w in low]
    if not gates:
        return False  # most texts: no seed is named in them
    if "otp" in gates and "otpauth:" in low:
        for i, _ in positions(low, ("otpauth:",)):
            uri = text[i : i + 2048].split(None, 1)[0]
            if any(otp_seed_ok(m[1]) for m in _OTPAUTH_SECRET.finditer(uri)):
                return True
    words = tuple(w for w in _OTP_WORDS if w in gates or ("auth" in gates and w.startswith("auth")))
    for i, _ in positions(low, words):
        if low.startswith("otpauth", i):
            continue
        m = OTP_SEED.match(text, i)
        if not m or not otp_seed_ok(m["value"]):
            continue
        name = text[i : m.start("words")] + m["words"]
        if not (m["sep"] or m["verb"] or "(" in text[m.end("words") : m.start("value")]):
            # no separator ("TOTP seed JBSW..."): the name must end right before a seed with digits
            if (
                not _SEED_NOUN.search(name.split()[-1] if name.split() else "")
                or sum(c in "234567" for c in m["value"]) < 2
            ):
                continue
        call = text.startswith("(", m.start("value") - 2) or text.startswith("(", m.start("value") - 1)
        if (_SEED_NOUN.search(name) or (call and low.startswith(("totp", "hotp"), max(0, i - 1)))) and not (
            _NOT_SEED_WORDS.search(name)
        ):
            return True
    return False


# --- cryptocurrency private keys -------------------------------------------------------------------
_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_B58_INDEX = {c: i for i, c in enumerate(_B58)}
B58_RUN = re.compile(r"(?<![1-9A-HJ-NP-Za-km-z])[1-9A-HJ-NP-Za-km-z]{50,112}(?![1-9A-HJ-NP-Za-km-z])")
# BIP-32 version bytes of extended *private* keys (xprv, tprv, yprv, zprv, uprv, vprv, Yprv, Zprv...)
_EXTENDED_PRIVATE = {
    bytes.fromhex(v)
    for v in ("0488ade4", "04358394", "049d7878", "04b2430c", "044a4e28", "045f18bc", "0295b005", "02aa7a99")
}


def base58check(s: str) -> bytes | None:
    """The payload of a base58check string, or None when its 4-byte double-SHA-256 checksum fails."""
    n = 0
    for c in s:
        n = n * 58 + _B58_INDEX[c]
    raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
    raw = b"\0" * (len(s) - len(s.lstrip("1"))) + raw
    if len(raw) < 5:
        return None
    payload, check = raw[:-4], raw[-4:]
    return payload if hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4] == check else None


def _is_private_key_string(s: str) -> bool:
    """WIF, an extended private key or a BIP-38 encrypted key, its checksum verified."""
    n = len(s)
    if not (
        (n in (51, 52) and s[0] in "5KL9c") or (n == 111 and s[1:4] == "prv") or (n == 58 and s[:2] == "6P")
    ):
        return False
    payload = base58check(s)
    if payload is None:
        return False
    if n in (51, 52):  # version, 32-byte key, and 0x01 when the public key is compressed
        return payload[0] in (0x80, 0xEF) and (
            len(payload) == 33 or (len(payload) == 34 and payload[-1] == 1)
        )
    if n == 111:
        return len(payload) == 78 and payload[:4] in _EXTENDED_PRIVATE and payload[45] == 0
    return len(payload) == 39 and payload[:2] in (b"\x01\x42", b"\x01\x43")


def has_private_key_string(tokens: list[str]) -> bool:
    for token in tokens:
        if len(token) < 51:
            continue
        for m in B58_RUN.finditer(token):
            if _is_private_key_string(m.group()):
                return True
    return False


# "my ethereum private key: 0x4c08...", "metamask private key 4c08...", "PRIVATE_KEY=0x...",
# "the secret key of my wallet: 0x...": a raw key named as a private key, or as a wallet's secret
# key. Not "the private key hash is ...", "tx hash: 0x...", "public key: 0x...".
RAW_KEY = re.compile(
    r"(?i)(?:priv(?:ate)?[ \t_-]?key|(?:secret|spend(?:ing)?|signing)[ \t_-]?key)s?[\"']?"
    r"(?P<about>(?:[ \t]+[\w'.-]{1,30}){0,5}?)"
    r"(?:[ \t]*(?:[:=\u2013\u2014-]|=>)|[ \t]+(?:is|was)\b(?:[ \t]*:)?|(?=[ \t]))[ \t]*[\"'`]?"
    r"(?P<value>(?:0x)?[0-9a-fA-F]{64}|[1-9A-HJ-NP-Za-km-z]{80,90})(?![\w+/=-])"
)
_WALLET = re.compile(
    r"(?i)\b(?:wallet|bitcoin|btc|ethereum|eth|ether|metamask|solana|sol|phantom|crypto|ledger|trezor"
    r"|electrum|monero|xmr|litecoin|ltc|dogecoin|tron|bnb|polygon|avalanche|web3|blockchain|evm)\b"
)
_NOT_KEY_WORDS = re.compile(
    r"(?i)\b(?:hash(?:es)?|sha\w*|checksum|digest|fingerprint|id|txid|tx|transaction|block|commit"
    r"|address|public|pub|signature|format|length|example|sample|placeholder)\b"
)
_WORDS_BEFORE = re.compile(r"(?:[\w'.-]{1,30}[ \t]+){0,4}$")


def has_named_raw_key(text: str, low: str) -> bool:
    starts = [i for i, _ in positions(low, ("priv",))] if "priv" in low else []
    if "key" in low:
        starts += [
            i for i, _ in positions(low, ("secret", "spend", "signing")) if low.find("key", i, i + 12) != -1
        ]
    for i in starts:
        m = RAW_KEY.match(text, i)
        if not m:
            continue
        value = m["value"]
        hexed = value[2:] if value[:2].lower() == "0x" else value
        if shannon_entropy(hexed) < 3.0:
            continue  # "0x000...0" is no key
        before = _WORDS_BEFORE.search(text, max(0, i - 80), i)
        around = (before.group() if before else "") + m["about"]
        if _NOT_KEY_WORDS.search(around):
            continue
        if low.startswith("priv", i) or _WALLET.search(text, max(0, i - 80), m.end() + 40):
            return True
    return False
