"""Secrets stated in words or assigned in code: a password told in a sentence ("the password is
…", "password maple-syrup-4471"; in prose of any characters: "my password is sunflower"), a secret
named and given ("the deploy token: …"), a wifi key ("the WPA key: goldfish"), a login pair ("login: bob /
hunter2x"), a security answer ("the security answer is fluffy"), and an assignment of a literal to
a secret-ish name (``api_key = "…"``), each judged so that variables, types, env lookups,
placeholders and the words prose puts after "password is" ("incorrect", "required", "the same")
are not secrets. One family of the shapes ``pipelines.screening`` checks; pure stdlib, like it."""

from __future__ import annotations

import re

from pipelines.screening.text import positions, shannon_entropy, word_coverage

# --- assignments: matched right after a secret-ish word; the whole identifier is judged in code ---
ASSIGNMENT_KEYWORDS = ("key", "secret", "token", "credential", "auth", "bearer")  # and "pass", "pwd"
ASSIGNMENT = re.compile(  # continues after the keyword: rest of the name, separator, value
    r"[\w.-]{0,40}+[\"']?[ \t]{0,3}(?::=|=>|==|=|:)[ \t]{0,3}"
    r"(?:[rbuf]{0,2}([\"'`])(?P<quoted>[^\"'`\n]{0,200})\1|(?P<bare>[^\s\"'`,;]{1,200}))"
)
# "my password is Tr0ub4dor&3.", "the wifi pw: Xk29aPq7", "Passwort ist Sommer2024!": a word for
# password (singular: "bad passwords: 123456, qwerty" lists examples), maybe what it is for, a
# separator or a copula, and one token (judged in code).
_PASSWORD_WORD = (
    r"pass(?:[ -]?(?:word|code|phrase)|wort|wd|ord)?|pw(?:or)?d|pw|ps?sw(?:r?d)?|p/w"
    r"|kennwort|contrase(?:\u00f1|n)a|mot de passe|senha|wachtwoord|l(?:\u00f6|o)senord|has(?:\u0142|l)o"
    r"|\u043f\u0430\u0440\u043e\u043b\u044c"
)
_OPEN_QUOTE, _CLOSE_QUOTE = "\"'`\u201c\u2018\u00ab", "\"'`\u201d\u2019\u00bb"
PASSWORD_STATEMENT = re.compile(
    rf"(?i)(?P<word>{_PASSWORD_WORD})\b"
    r"(?P<about>[ \t]+(?:for|to|of|on|at|f\u00fcr|zum|de|del|du|da|do|van|voor|i|we|you|they|that)"
    r"(?:[ \t]+[\w.@'-]{1,30}){1,3}?)?"  # "for the guest wifi", "I use"
    r"(?:[ \t]*(?P<sep>[:=]|-{1,2}>?|\u2192)|['\u2019]s\b"
    # "I changed my password to ...", "the password is set to ...": a verb of change is checked in code
    r"|[ \t]+(?P<to>(?:(?:is|was|got|been)[ \t]+)?(?:(?:set|changed|reset|updated)[ \t]+)?to)\b"
    r"|[ \t]+(?:is|was|ist|war|es|est|era|\u00e9|\u00e4r|er|je|jest)\b(?:[ \t]*:)?"
    r"(?:[ \t]+(?:now|still|just|simply|currently|actually|literally|always))?)[ \t]*"  # "is now ..."
    # Quoted: a token, or plain words ("is 'purple elephant'", judged by _is_quoted_phrase).
    rf"(?:[{_OPEN_QUOTE}](?P<quoted>[^\s{_CLOSE_QUOTE}](?:[^\n\r\t{_CLOSE_QUOTE}]{{2,79}}))[{_CLOSE_QUOTE}]"
    r"|(?P<bare>[^\s\"'`]{3,64}+))"
    r"(?P<after>[ \t]*(?:\n|$|\(|[-\u2013\u2014][ \t]|(?:and|but|or|so|for|on|to|please|pls|if|now|today"
    r"|yesterday|tonight|last|this|earlier|recently|again|btw)\b))?"
)
# "pass" and "pw" mean many things ("boarding pass", "a first pass"): a password only after these.
_PASS_QUALIFIERS = {
    "my", "our", "the", "your", "wifi", "wi-fi", "wlan", "router", "network", "login", "email", "mail",
    "account", "admin", "root", "user", "db", "database", "server", "ssh", "vpn", "default", "guest",
    "master", "sudo", "ftp", "smtp", "imap", "app", "portal", "laptop", "computer", "phone", "device",
}  # fmt: skip
_PREVIOUS_WORD = re.compile(r"(?:^|(?<=\s))([\w-]*)[ \t]*$")
_CREDENTIAL_LINE = re.compile(
    r"(?i)\b(?:user(?:name)?|login|e-?mail|account|ssid|host|wi-?fi|network|router)\b"
)  # "user: bob, pw: x", "wifi: HomeNet, pass: x"
_ADJECTIVE_COMPOUND = re.compile(r".*[0-9].*-[a-z]{3,}")  # "SHA256-hashed", "AES256-encrypted"
# "password maple-syrup-4471": no separator at all, so the value must mix letters and digits and end
# the clause ("password 2FA required" and "password abc123 is weak" do not).
PASSWORD_DIRECT = re.compile(
    r"(?i)(?:password|passwd|pswd|passcode|passphrase)[ \t]+[\"'`]?(?P<value>[^\s\"'`]{6,64}+)"
    r"(?P<after>[\"'`]?[.,;:!?)]*[ \t]*"
    r"(?:\n|$|\(|[-\u2013\u2014][ \t]|(?:and|but|or|so|for|on|to|please|pls|if)\b))?"
)
_DIRECT_WORDS = ("password", "passwd", "pswd", "passcode", "passphrase")
_UNIT = re.compile(r"(?i)\d+\+?(?:[a-z]{1,5}|\d*[.,]\d+)|v?\d+(?:\.\w+)+")  # "12chars", "2fa", "v1.2.3"

# "my mailchimp auth token is 3f2a...", "api key 9c1e...": a secret named in prose, then a value.
_SECRET_NOUNS = ("token", "key", "secret", "credential", "creds", "auth")
_WORDS_BEFORE = re.compile(r"(?:[\w'.-]{1,30}[:=]?[ \t]+){0,3}[\w.-]{0,40}$")  # up to 3 words, same clause
SECRET_STATEMENT = re.compile(
    r"[A-Za-z]{0,12}(?P<about>(?:[ \t]+[\w.@'-]{1,30}){0,4}?)"
    r"(?:[ \t]*(?P<sep>[:=\u2014\u2013]|->|-)|[ \t]+(?P<verb>is|was|are|here)\b(?:[ \t]*:)?|(?=[ \t]))"
    r"[ \t]*[\"'`]?(?P<value>[\w+/=.~-]{20,200}+)"
)
# Words saying a hex or base64 value is a hash, an id or an address, not a credential.
_NOT_CREDENTIAL_WORDS = {
    "commit", "sha1", "sha256", "sha512", "revision", "rev", "etag", "trace", "request", "transaction",
    "tx", "txn", "order", "tracking", "address", "contract", "wallet", "block", "image", "build",
    "cache", "object", "blob", "tree", "signature", "checksums", "hashes",
}  # fmt: skip
URL_CREDENTIALS = re.compile(r"://[^\s:/@]{0,64}:(?P<pw>[^\s:/@]{1,128})@")  # scheme://user:pw@host
_IDENTIFIER_TAIL = re.compile(r"[\w.-]{1,40}$")
_IDENTIFIER_HEAD = re.compile(r"[\w.-]{1,60}")
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")  # splits snake_case, kebab and camelCase

PASSWORD_WORDS = {"password", "passwd", "pwd", "passphrase", "passcode", "passwort", "kennwort", "passord"}
_SECRET_WORDS = PASSWORD_WORDS | {
    "secret", "secrets", "token", "credential", "credentials", "auth", "authorization", "bearer",
    "apikey", "secretkey", "accesskey", "privatekey", "authtoken", "accesstoken", "refreshtoken",
}  # fmt: skip
# "key" alone is a dict/cache/primary key; it is secret-ish only when qualified, e.g. api_key.
_KEY_QUALIFIERS = {
    "api", "access", "secret", "private", "signing", "encryption", "master", "client", "license",
    "service", "app", "account", "admin", "auth", "session", "webhook",
}  # fmt: skip
# Words that make a name about a secret rather than the secret itself (or not secret at all).
_NOT_SECRET_WORDS = {
    "public", "pub", "id", "ids", "uuid", "guid", "hash", "hashed", "sha", "md5", "digest", "checksum",
    "name", "type", "url", "uri", "path", "file", "dir", "count", "length", "len", "limit", "max",
    "min", "size", "expiry", "expires", "exp", "ttl", "timeout", "model", "field", "prefix", "format",
    "header", "endpoint", "version", "usage", "label", "hint", "regex", "pattern", "policy", "env",
    "var", "arn", "region", "fingerprint", "kid", "example", "placeholder", "sample",
}  # fmt: skip
_PLACEHOLDER_MARKS = (
    "your", "example", "placeholder", "changeme", "change_me", "redacted", "dummy", "sample", "xxx",
    "***", "...", "\u2026", "insert", "replace",
)  # fmt: skip
# A password literal naming itself ("password123", "mysecret", "test1234") is a documentation stand-in.
_PASSWORD_PLACEHOLDERS = _PLACEHOLDER_MARKS + ("password", "passwd", "secret", "here", "test", "fake", "todo")
_NOT_LITERAL_START = tuple("$%{[(<*!?:@&\\")  # ${VAR} $(cmd) %s {{tpl}} <your..> **** :bind @file
_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
_SLUG = re.compile(r"(?:[A-Za-z][a-z]*|[A-Z]+|\d+)(?:[-_./](?:[A-Za-z][a-z]*|[A-Z]+|\d+))+")
_WORDS_JOINED = re.compile(r"[A-Za-z]+(?:[-_.][A-Za-z]+)+")
# "password: SHA-256" names how a password is kept, not the password.
_ALGORITHM = re.compile(
    r"(?i)(?:sha|aes|rsa|hmac|pbkdf|argon|utf|base)[-_]?\d+(?:[-_]\w+)*|md[245]|ed25519|x509|3des"
)
_TRAILING_PUNCT = ")]}>:;,.!?"  # closes a call or a sentence, not part of an unquoted value
_SPACE = re.compile(r"\s")
_SECRET_CHARS = re.compile(r"[\w+/=.~-]+")
_QUOTED_SECRET_CHARS = re.compile(r"[!-~]+")  # printable ASCII, no spaces


# A generic secret must look machine-made. Measured per-char Shannon entropy of random strings
# (mean / 0.1th percentile): base62 20 chars 4.0 / 3.5, 32 chars 4.6 / 4.1; hex 24 chars 3.5 / 2.9,
# 32 chars 3.6 / 3.1. A threshold of 3.0 keeps practically every base62 key and 32-hex key while
# rejecting repetitive stand-ins ("aaaa1111bbbb2222cccc", "abcabc123123..."). Word-made names score
# 3.4-3.9 too ("user_profile_settings_2024_v2": 3.9), so the slug/word checks, not entropy, reject those.
SECRET_MIN_LEN = 20
SECRET_MIN_ENTROPY = 3.0


def looks_random(v: str, quoted: bool = False) -> bool:
    low = v.lower()
    # Unquoted, a value is one token of key characters; quoted it may hold any printable symbol
    # (Django's SECRET_KEY = "django-insecure-k#3$...") but not a template or variable reference.
    chars_ok = _QUOTED_SECRET_CHARS.fullmatch(v) and not v.startswith(_NOT_LITERAL_START)
    if len(v) < SECRET_MIN_LEN or not (chars_ok if quoted else _SECRET_CHARS.fullmatch(v)):
        return False
    if not re.search(r"[A-Za-z]", v):
        return False  # a number is no key
    if not re.search(r"[0-9]", v) and not (
        re.search(r"[a-z]", v)
        and re.search(r"[A-Z]", v)
        and word_coverage(v) < 0.4
        and shannon_entropy(v) >= 3.5
    ):
        return False  # letters only: a key mixes both cases at random ("kQpZrXwT..."), a name has words
    if any(w in low for w in _PLACEHOLDER_MARKS) or "://" in v or v.startswith(("/", "./", "~/")):
        return False
    if _UUID.fullmatch(v) or _SLUG.fullmatch(v):
        return False  # UUIDs identify things; slugs and dotted paths are names
    if word_coverage(v) >= 0.5:
        return False  # mostly dictionary-looking runs: a variable or config name
    return shannon_entropy(v) >= SECRET_MIN_ENTROPY


def _is_password_literal(v: str, quoted: bool) -> bool:
    """A concrete password, not a variable, type annotation, env lookup, mask or placeholder."""
    if not 4 <= len(v) <= 128 or len(set(v)) < 3 or _SPACE.search(v):
        return False  # spaces: a validation message such as "Password must be 8+ chars"
    if v.startswith(_NOT_LITERAL_START) or v.startswith(("/", "./", "~/")) or re.match(r"[A-Za-z]:\\", v):
        return False
    if "://" in v or v.lower().startswith("www."):
        return False  # a link: "the password reset page is https://..."
    if any(w in v.lower() for w in _PASSWORD_PLACEHOLDERS) or _ALGORITHM.fullmatch(v):
        return False
    if not quoted and (re.search(r"[()\[\]{}]", v) or re.fullmatch(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+", v)):
        return False  # a call, subscript or attribute: getpass(), os.environ[...], self.password
    # Words, even CamelCase or kebab-joined, are variables, types, constants or prose (None, str,
    # HiddenText, "IAmSensitive", "foo-bar"); a password literal worth hiding has a digit or symbol
    # (a letter of any alphabet is no symbol: "obrigat\u00f3ria" is a word).
    return any(not (c.isalpha() or c == "_") for c in v) and not _WORDS_JOINED.fullmatch(v)


# --- a password of plain words, told in prose: "my password is sunflower", "the wifi passwd: tangerine"
# A letters-only word is a password only where prose states one (not code comparing or passing a
# variable) and only when it is none of the words prose puts there instead: a judgement
# ("incorrect", "weak"), a state ("expired", "required"), a pronoun or article ("the", "mine"), a
# type or value of code ("str", "None"), a heading ("Password: Requirements") or a default that
# documentation and docker files show ("changeme", "postgres", "admin": stand-ins, not secrets).
_FUNCTION_WORDS = {
    "the", "a", "an", "this", "that", "these", "those", "it", "its", "it's", "is", "are", "was", "were",
    "be", "been", "being", "am", "do", "does", "did", "has", "have", "had", "will", "would", "can",
    "could", "should", "shall", "may", "might", "must", "need", "needs", "not", "no", "nor", "and", "or",
    "but", "if", "then", "than", "so", "as", "at", "by", "for", "from", "in", "into", "of", "off", "on",
    "onto", "to", "up", "down", "out", "over", "under", "with", "without", "within", "about", "after",
    "before", "via", "per", "i", "me", "my", "mine", "we", "us", "our", "ours", "you", "your", "yours",
    "he", "him", "his", "she", "her", "hers", "they", "them", "their", "theirs", "who", "whom", "whose",
    "what", "which", "where", "when", "why", "how", "whatever", "whichever", "there", "here", "all",
    "any", "some", "each", "every", "both", "either", "neither", "none", "one", "two", "three", "four",
    "five", "six", "seven", "eight", "nine", "ten", "twelve", "twenty", "least", "most", "more", "less",
    "few", "many", "much", "several", "enough", "also", "too", "very", "just", "only", "still",
    "already", "now", "again", "always", "never", "ever", "often", "sometimes", "usually", "please",
    "words", "word", "characters", "character", "chars", "letters", "letter", "digits", "digit",
    "numbers", "number", "symbols", "symbol", "use", "using", "enter", "type", "choose", "pick", "see",
}  # fmt: skip
_NOT_PASSWORD_WORDS = _FUNCTION_WORDS | {
    # judgements and states
    "correct", "incorrect", "wrong", "right", "valid", "invalid", "weak", "strong", "stronger",
    "weaker", "secure", "insecure", "safe", "unsafe", "good", "bad", "fine", "great", "ok", "okay",
    "easier", "harder", "better", "worse", "safer", "simpler", "bigger", "smaller", "larger", "faster",
    "slower", "greater", "higher", "lower", "newer", "older", "best", "worst", "easiest", "hardest",
    "dumb", "stupid", "silly", "lame", "crap", "trash", "garbage", "ancient", "ugly", "cool", "nice",
    "awesome", "perfect", "solid", "decent", "legit", "wild", "insane", "crazy", "funny", "cute",
    "clever", "smart", "obscure", "tricky", "annoying", "confusing", "overkill", "fun",
    "long", "longer", "short", "shorter", "simple", "easy", "hard", "tough", "complex", "common",
    "obvious", "random", "unique", "new", "old", "current", "previous", "temporary", "permanent",
    "default", "optional", "mandatory", "compulsory", "empty", "blank", "null", "nil", "none", "true",
    "false", "undefined", "unknown", "unset", "missing", "same", "different", "similar", "identical",
    "visible", "hidden", "private", "public", "personal", "shared", "secret", "sensitive", "plain",
    "plaintext", "cleartext", "clear", "due", "gone", "lost", "known", "real", "actual", "important",
    "irrelevant", "impossible", "possible", "memorable", "case", "lowercase", "uppercase", "numeric",
    "alphanumeric", "mixed", "needed", "necessary", "unchanged", "active", "inactive", "live",
    "correctly", "incorrectly", "wrongly", "yes", "yeah", "yep", "nope", "sure", "maybe", "perhaps",
    "probably", "definitely", "obviously", "apparently", "basically", "literally", "honestly", "really",
    "quite", "pretty", "rather", "almost", "exactly", "also", "otherwise", "elsewhere", "somewhere",
    "nowhere", "something", "anything", "everything", "nothing", "someone", "anyone", "everyone",
    "nobody", "another", "other", "others", "such", "own", "mine", "yours", "today", "tomorrow",
    "yesterday", "soon", "later", "once", "twice", "daily", "weekly", "monthly", "yearly", "annually",
    "forever", "below", "above", "attached", "inside", "outside", "under", "there", "here", "broken",
    "forgotten", "stolen", "written", "given", "taken", "chosen", "frozen", "shown", "seen", "sent",
    "set", "reset", "kept", "built", "tbd", "tba", "na", "unavailable", "off", "fixed", "static",
    "dynamic", "global", "local", "remote", "internal", "external", "manual", "automatic", "auto",
    "unlimited", "limited", "strict", "loose", "free", "paid", "cheap", "expensive", "open", "closed",
    "ready", "busy", "full", "complete", "incomplete", "final", "first", "last", "next", "second",
    "third",
    # nouns a heading or a description puts after "password:" ("Password: Requirements")
    "requirements", "requirement", "rules", "rule", "policy", "policies", "format", "length",
    "strength", "complexity", "history", "hint", "hints", "prompt", "dialog", "screen", "page", "link",
    "email", "form", "box", "field", "fields", "label", "manager", "generator", "protection", "change",
    "changes", "expiry", "expiration", "recovery", "attempts", "attempt", "authentication",
    "verification", "confirmation", "login", "logon", "signin", "access", "account", "user", "username",
    "note", "notes", "tip", "tips", "example", "examples", "sample", "demo", "instructions", "details",
    "info", "information", "settings", "options", "option", "section", "step", "steps", "check", "ask",
    "contact", "call", "provided", "available", "coming", "pending", "expire", "expires", "rotate",
    "match", "matches", "update", "renew", "remember", "protect", "work", "works", "worked", "fail",
    "fails", "failed", "reuse", "share", "store", "save", "keep", "guess", "crack", "leak", "mask",
    "hash", "salt", "encrypt", "decrypt", "verify", "validate", "confirm", "submit", "logout", "sign",
    "create", "generate", "show", "hide",
    # types, values and names of code
    "str", "string", "strings", "int", "integer", "bool", "boolean", "bytes", "byte", "text", "char",
    "varchar", "float", "object", "array", "list", "dict", "map", "void", "secretstr", "password",
    "passwd", "pass", "pwd", "passcode", "passphrase", "value", "values", "input", "inputs", "param",
    "params", "parameter", "argument", "arg", "args", "var", "variable", "digest", "token", "key",
    "data", "body", "payload", "result", "config", "env", "environment", "self", "this", "masked",
    "redacted", "omitted", "removed", "protected", "encrypted", "required", "disabled", "enabled",
    "hashed", "salted", "stored", "saved", "sha", "bcrypt", "scrypt", "argon", "md", "credentials",
    "credential", "creds", "auth", "secrets", "placeholder", "dummy", "fake", "mock", "stub", "todo",
    "fixme", "xxx", "cipher", "ciphertext", "temp", "tmp", "original", "orig", "copy", "clone", "src",
    "dst", "res", "ret", "val", "obj", "item", "elem", "entry", "record", "row", "req", "request",
    "response", "resp", "ctx", "context", "cfg", "conf", "candidate", "raw", "encoded", "decoded",
    "ssh", "gpg", "pgp", "keygen", "openssl", "keychain", "keyring", "vault", "bitwarden", "keepass",
    "lastpass", "dashlane", "onepassword",
    # defaults that documentation and docker files show: stand-ins, not secrets
    "changeme", "admin", "administrator", "root", "toor", "guest", "postgres", "postgresql", "mysql",
    "mariadb", "redis", "mongo", "mongodb", "rabbitmq", "oracle", "sa", "sysadmin", "test", "testing",
    "tester", "abcd", "abcdef", "foobar", "foo", "bar", "baz", "scott", "tiger", "present", "absent",
}  # fmt: skip
# Participles, adjectives and adverbs by their ending: "compromised", "expiring", "guessable",
# "case-sensitive", "useless", "completely" (lengths keep "olive", "thing" and "butterfly" as words).
_DESCRIPTIVE = re.compile(
    r"[a-z]{3,}ed|[a-z]{3,}ing|[a-z]{2,}[ai]ble|[a-z]{3,}ive|[a-z]{3,}ous|[a-z]{3,}ful|[a-z]{3,}less"
    r"|[a-z]{2,}(?:al|e|t|b|i|ss|n|r)ly|[a-z]{2,}ical"
)
# Words (lower, Capitalised or upper case), maybe hyphen-joined: "sunflower", "maple-syrup"; not a
# camelCase or snake_case name, which in code is a variable ("hashedPassword", "user_pw").
_WORD_VALUE = re.compile(r"(?:[a-z]+|[A-Z][a-z]+|[A-Z]+)(?:-(?:[a-z]+|[A-Z][a-z]+|[A-Z]+)){0,5}")
# The English words for a password: a word value is judged only after them (a German or Spanish
# "ist falsch", "es incorrecta" would need those languages' words).
_ENGLISH_PASSWORD_WORDS = {
    "password", "pass word", "pass-word", "passcode", "pass code", "pass-code", "passphrase",
    "pass phrase", "pass-phrase", "passwd", "pass", "pwd", "pword", "pw", "psw", "pssw", "pswd", "psswd",
    "pswrd", "psswrd", "p/w",
}  # fmt: skip
# "pass" alone is a ticket, a mountain road or a test run: a word value needs one of these before it.
_STRONG_PASS_QUALIFIERS = _PASS_QUALIFIERS - {"my", "our", "the", "your", "default"}
# A line of code, not prose: a keyword opening it, or an operator before the password word.
_CODE_LINE = re.compile(
    r"(?:if|elif|while|assert|return|def|fn|func|function|let|const|var|val|case|when|unless|and|or|not|"
    r"raise|throw|await|lambda|print|console|log)\b|.*(?:==|!=|&&|\|\||=>)"
)
# "if the password is ...", "when no password is ...", "no username or password is ...": a condition
# or a rule governing the clause (no comma between), not a statement of the value.
_CONDITION_BEFORE = re.compile(
    r"(?i)\b(?:if|when|whenever|unless|whether|until|once|any|every|each)\b[^.!?,;:\n]{0,40}$"
    r"|\bno[ \t]+(?:[\w'-]+[ \t]+){0,3}$"
)
_CHANGE_BEFORE = re.compile(  # "I changed my wifi password to ...", "set the admin password to ..."
    r"(?i)\b(?:set|sets|setting|changed?|changes|changing|reset|resets|resetting|update[ds]?|updating|"
    r"switch(?:ed|es)?|made|make)[ \t]+(?:[\w'-]+[ \t]+){0,3}$"
)


# Stand-ins ("your", "example", "changeme") and names of a variable holding it ("mypass", "hashpw").
_NOT_WORD_PARTS = (
    *(w for w in _PASSWORD_PLACEHOLDERS if w.isalpha()),
    "pass",
    "pwd",
    "hash",
    "cred",
    "token",
)


def _is_word_password(v: str) -> bool:
    """A plain word or hyphen-joined words stated as a password ("sunflower", "maple-syrup",
    "otter-nine-lamp": a number spelled out among two or more words)."""
    if not 4 <= len(v) <= 40 or not _WORD_VALUE.fullmatch(v):
        return False
    low = v.lower()
    parts = [w for w in low.split("-") if not is_number_word(w)]
    if len(parts) < 2 or len(parts) * 2 < low.count("-") + 1:
        parts = low.split("-")  # "one-time": a number word counts as a word there
    if any(w in _NOT_PASSWORD_WORDS or _DESCRIPTIVE.fullmatch(w) for w in parts):
        return False
    return len(set(low)) >= 3 and not any(w in low for w in _NOT_WORD_PARTS)


def _is_quoted_phrase(v: str) -> bool:
    """Plain words given in quotes as a password ("is 'purple elephant'"): the quotes bound the
    value; a description ("'the one I always use'") holds a function or placeholder word."""
    words = [w.strip(".,!?").lower() for w in v.split()]
    return (
        2 <= len(words) <= 8
        and len(v) <= 80
        and all(
            w and w not in _NOT_PASSWORD_WORDS and not any(p in w for p in _PASSWORD_PLACEHOLDERS)
            for w in words
        )
    )


def _stated_in_prose(text: str, i: int, m: re.Match[str]) -> bool:
    """The password statement at `i` is prose or a config line ("Password: sunflower",
    "--password=letmein"), not code comparing or passing a variable ("if self.password is sentinel:",
    "DB_PASSWORD: postgres", "login(user, pwd=secret)", "password = fallback")."""
    if i and text[i - 1] in "._$>@:":
        return False  # part of a longer name: self.password, DB_PASSWORD, $password, obj->password
    start = text.rfind("\n", 0, i) + 1
    line = text[start:i].lstrip(" \t-*>#\u2022")
    if _CODE_LINE.match(line) or line.count("(") > line.count(")"):
        return False  # a condition, a declaration, or an argument of a call
    if m["sep"] == "=" and text[m.start("sep") - 1] in " \t":
        return False  # "password = fallback" assigns a variable
    if _CONDITION_BEFORE.search(text, max(0, i - 50), i):
        return False
    bare = m["bare"] or ""
    if bare.endswith(":") or "{" in line:
        return False  # "if password is sentinel:" opens a block; "{ user, password: pw }" is code
    # "  password: candidate," ending its line is a member of an object literal, not a statement
    member = m["sep"] == ":" and bare.endswith(",") and text[m.end("bare") : m.end("bare") + 1] in ("", "\n")
    return not member


def _identifier_words(text: str, start: int) -> list[str]:
    """The words of the whole identifier around position `start` (where a keyword was found)."""
    head = _IDENTIFIER_TAIL.search(text, max(0, start - 40), start)
    tail = _IDENTIFIER_HEAD.match(text, start)
    name = (head.group() if head else "") + (tail.group() if tail else "")
    return [w.lower() for w in _WORDS.findall(name)]


def _is_secret_name(words: list[str]) -> bool:
    if not words or any(w in _NOT_SECRET_WORDS for w in words):
        return False
    if any(w in _SECRET_WORDS for w in words):
        return True
    return "key" in words and any(w in _KEY_QUALIFIERS for w in words)


def _assigned(text: str, keywords: list[tuple[int, str]]) -> set[str]:
    found: set[str] = set()
    last_end = -1
    for i, word in keywords:
        # Skip a keyword inside the last assignment (its name, e.g. "key" in "secret_key", or value).
        m = ASSIGNMENT.match(text, i + len(word)) if i >= last_end else None
        if not m:
            continue
        last_end = m.end()
        quoted = m.group("quoted") is not None
        value = m.group("quoted") if quoted else m.group("bare").rstrip(_TRAILING_PUNCT)
        if len(value) < 4:  # too short for any rule below; skip the name analysis
            continue
        words = _identifier_words(text, i)
        if words and words[-1] in PASSWORD_WORDS and _is_password_literal(value, quoted):
            found.add("password")
        elif _is_secret_name(words) and looks_random(value, quoted):
            found.add("secret_assignment")
    return found


def assignment_shapes(text: str, low: str, key: bool = True, cred: bool = True) -> set[str]:
    """`key`, `cred`: whether "key" and "cred" are in `low`, when the caller knows (saves scans)."""
    found: set[str] = set()
    pass_pw = list(positions(low, ("pass", "pw")))  # shared with the prose rule below
    if ":" in text or "=" in text:  # every assignment has one; over half of all chat turns have neither
        words = tuple(w for w in ASSIGNMENT_KEYWORDS if (key or w != "key") and (cred or w != "credential"))
        keywords = [*positions(low, words), *((i, "pass") for i, w in pass_pw if w == "pass")]
        keywords += [(i, "pwd") for i, w in pass_pw if w == "pw" and low.startswith("pwd", i)]
        found |= _assigned(text, sorted(keywords))
    extra = _PASSWORD_LITERALS if low.isascii() else _PASSWORD_LITERALS + _PASSWORD_LITERALS_NON_ASCII
    if any(_is_password_statement(text, low, i) for i, _ in [*pass_pw, *positions(low, extra)]):
        found.add("password")
    if "://" in text and any(_is_password_literal(m["pw"], False) for m in URL_CREDENTIALS.finditer(text)):
        found.add("password")
    return found


# Where the prose rule is tried, besides "pass" and "pw" (password, passwd, Passwort, mot de passe...).
# Each literal is one more scan of every text, so words of languages written mostly with accents are
# looked for only in non-ASCII texts ("a senha \u00e9 ...", "das Kennwort f\u00fcr ...").
_PASSWORD_LITERALS = ("psw", "pssw", "p/w", "contrase")
_PASSWORD_LITERALS_NON_ASCII = (
    "kennwort", "senha", "wachtwoord", "losenord", "l\u00f6senord", "haslo", "has\u0142o",
    "\u043f\u0430\u0440\u043e\u043b\u044c",
)  # fmt: skip
_AMBIGUOUS_PASSWORD_WORDS = ("pass", "pw", "psw", "pssw", "p/w")


def _is_password_statement(text: str, low: str, i: int) -> bool:
    i -= 7 if low.startswith("mot de passe", i - 7) else 0
    if i and text[i - 1].isalnum():
        return False
    m = PASSWORD_STATEMENT.match(text, i)
    if not m:
        return low.startswith(_DIRECT_WORDS, i) and _is_direct_password(text, i)
    quoted = m["quoted"] is not None
    value = m["quoted"] if quoted else m["bare"].rstrip(_TRAILING_PUNCT)
    clause_end = quoted or m["after"] is not None or value != m["bare"]
    if not (clause_end or m["sep"] in (":", "=")) or _ADJECTIVE_COMPOUND.fullmatch(value):
        return False  # after "is", a bare token must end the clause: "is stored hashed" is prose
    if m["sep"] and m["sep"][0] == "-" and not text[m.start("sep") - 1].isspace() and not m["about"]:
        return False  # "--password-stdin", "password-protected": a compound, not a dash
    to_verb = m["to"] and any(v in m["to"].lower() for v in ("set", "chang", "updat"))
    if m["to"] and not to_verb and not _CHANGE_BEFORE.search(text, max(0, i - 60), i):
        return False  # "the password to log in": "to" states a value only after a verb of change
    word = low[i : m.end("word")]
    # In prose a stated password is a secret whatever its characters; a word needs the clause to end
    # there ("Password: see 1Password" is an instruction) and the statement to be no code.
    literal = _is_password_literal(value, quoted)
    # "is easy to guess", "is hard to remember": an adjective then an infinitive, not a value
    word_end = quoted or value != m["bare"] or (m["after"] is not None and m["after"].strip() != "to")
    wordy = (
        not literal
        and word_end
        and word in _ENGLISH_PASSWORD_WORDS
        # (a passphrase's words are `pipelines.screening.phrases`' to judge)
        and (_is_word_password(value) or (quoted and "phrase" not in word and _is_quoted_phrase(value)))
        and _stated_in_prose(text, i, m)
    )
    if not (literal or wordy):
        return False
    if word not in _AMBIGUOUS_PASSWORD_WORDS:
        return True
    # "pass"/"pw": only after a qualifier ("the wifi pw is"), opening a line ("pw: ...") or on a line
    # naming a user ("login: bob, pass: ..."); not a test status ("PASS: build-42"), not code
    # ("pw = x*2"), and with letters and digits or symbols ("your pass is valid until 2025"). A word
    # after "pass" needs a stronger qualifier: "my pass is ready" is a ticket.
    line = text[text.rfind("\n", 0, i) + 1 : i].strip(" \t-*>#\u2022")
    prev = _PREVIOUS_WORD.search(text, max(0, i - 30), i)
    prev_word = prev[1].lower() if prev else ""
    credentials = bool(_CREDENTIAL_LINE.search(line))
    if wordy:
        about = set((m["about"] or "").lower().split())
        strong = credentials or prev_word in _STRONG_PASS_QUALIFIERS or bool(about & _STRONG_PASS_QUALIFIERS)
        return strong or (word != "pass" and not line)
    qualified = not line or credentials or prev_word in _PASS_QUALIFIERS
    mixed = re.search("[A-Za-z]", value) and re.search("[^A-Za-z]", value)
    code = m["sep"] == "=" and text[m.start("sep") - 1] in " \t"
    return bool(qualified and mixed and not code and not text.startswith("PASS", i))


def _is_direct_password(text: str, i: int) -> bool:
    """ "password maple-syrup-4471": a password word, a space, a value mixing letters and digits."""
    m = PASSWORD_DIRECT.match(text, i)
    if not m:
        return False
    value = m["value"].rstrip(_TRAILING_PUNCT)
    if not (m["after"] is not None or value != m["value"]) or not re.search("[A-Za-z]", value):
        return False
    line = text[text.rfind("\n", 0, i) + 1 : i].lstrip(" \t-*>#\u2022")
    if _CODE_LINE.match(line):
        return False
    if not re.search("[0-9]", value):  # words: three or more joined ("password river-stone-moss")
        return value.count("-") >= 2 and _is_word_password(value) and not _CONDITION_BEFORE.search(line)
    if _UNIT.fullmatch(value) or _ADJECTIVE_COMPOUND.fullmatch(value):
        return False  # "password 12chars", "password v2.1", "password SHA256-hashed"
    return _is_password_literal(value, False)


def has_secret_statement(text: str, low: str) -> bool:
    for i, noun in positions(low, _SECRET_NOUNS):
        if i and low[i - 1].isalpha() and not low.startswith(("api", "auth", "access"), max(0, i - 6)):
            continue  # "monkey", "turkey"; but "apikey", "authtoken", "accesstoken"
        m = SECRET_STATEMENT.match(text, i + len(noun))
        if not m or (m["about"] and not (m["sep"] or m["verb"])):
            continue  # no separator, so "token refresh in commit 3f2a..." names no token value
        value = m["value"].rstrip(".,;:")
        if m["value"].endswith("..") or text.startswith("\u2026", m.end()):
            continue  # elided: "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9..."
        if not looks_random(value) or re.fullmatch(r"0x[0-9a-fA-F]{40}", value):
            continue  # not a key, or a public blockchain address
        before = _WORDS_BEFORE.search(text, max(0, i - 80), i)
        name = (before.group() if before else "") + text[i : m.start("about")] + m["about"]
        words = [w.lower() for w in _WORDS.findall(name)]
        if names_other_value(text, i) or any(
            w in _NOT_SECRET_WORDS or w in _NOT_CREDENTIAL_WORDS for w in words
        ):
            continue
        plural = {"tokens": "token", "keys": "key", "secrets": "secret", "creds": "credential"}
        if _is_secret_name([plural.get(w, w) for w in words]):
            return True
    return False


def names_other_value(text: str, at: int) -> bool:
    """The words just before `at` (same clause) say the value there is an id or a hash."""
    before = _WORDS_BEFORE.search(text, max(0, at - 80), at)
    words = [w.lower() for w in _WORDS.findall(before.group() if before else "")]
    return any(w in _NOT_SECRET_WORDS or w in _NOT_CREDENTIAL_WORDS for w in words)


# Numbers spelled out, which a passphrase may hold among its plain words ("river seven lantern moss").
_NUMBER_WORDS = {
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
    "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety", "hundred", "thousand",
    "million", "billion", "dozen",
}  # fmt: skip


def is_number_word(w: str) -> bool:
    """A number spelled out: "seven", "Forty-Two"."""
    return all(p in _NUMBER_WORDS for p in w.lower().split("-"))


# --- more things stated like a password: a wifi key, a login given as a pair, a security answer ----
# "the wifi key is sunshine99", "WPA key: goldfish", "psk=Xk29aPq7": a network's key is its password
# (a key alone is not: "the key is in the drawer", nor is "API key is ..." which is a token's).
NETWORK_KEY = re.compile(
    r"(?i)(?:(?:wi-?fi|wlan|wireless|network|router|wpa[23]?(?:-psk)?|wep)"
    r"(?:[ \t]+(?:network|security|wpa[23]?))?[ \t]+(?:key|pass[ \t-]?key)|psk)s?"
    r"(?P<about>[ \t]+(?:for|to|of|on|at)(?:[ \t]+[\w.@'-]{1,30}){1,3}?)?"
    r"(?:[ \t]*(?P<sep>[:=])|[ \t]+(?:is|was)\b(?:[ \t]*:)?(?:[ \t]+(?:now|still|just|currently))?)[ \t]*"
    rf"(?:[{_OPEN_QUOTE}](?P<quoted>[^\s{_CLOSE_QUOTE}]{{4,64}})[{_CLOSE_QUOTE}]"
    r"|(?P<bare>[^\s\"'`]{4,64}+))"
    r"(?P<after>[ \t]*(?:\n|$|\(|[-\u2013\u2014][ \t]|(?:and|but|or|so|for|on|please|if|now)\b))?"
)
_NETWORK_BEFORE = re.compile(  # where a network key's name starts, found back from "key"
    r"(?i)(?:wi-?fi|wlan|wireless|network|router|wpa[23]?(?:-psk)?|wep)"
    r"(?:[ \t]+(?:network|security|wpa[23]?))?"
    r"[ \t]+(?:pass[ \t-]?)?$"
)
# "the security answer is fluffy", "answer to my security question: Smith", "secret answer: Rover"
SECURITY_ANSWER = re.compile(
    r"(?i)(?:(?:security|secret)[ \t]+(?:question['\u2019]?s?[ \t]+)?answer"
    r"|answer[ \t]+to[ \t]+(?:my|the|your|our)[ \t]+(?:[\w'-]{1,20}[ \t]+)?security[ \t]+question)s?"
    r"(?P<about>[ \t]+(?:for|to|of|on|at)(?:[ \t]+[\w.@'-]{1,30}){1,3}?)?"
    r"(?:[ \t]*(?P<sep>[:=])|[ \t]+(?:is|was)\b(?:[ \t]*:)?(?:[ \t]+(?:still|just))?)[ \t]*"
    rf"(?:[{_OPEN_QUOTE}](?P<quoted>[^\s{_CLOSE_QUOTE}][^\n{_CLOSE_QUOTE}]{{1,59}})[{_CLOSE_QUOTE}]"
    r"|(?P<bare>[^\s\"'`]{2,40}+))"
    r"(?P<after>[ \t]*(?:\n|$|\(|[-\u2013\u2014][ \t]|(?:and|but|or|so|please|if)\b))?"
)
_NETWORK_TAILS = (
    "fi",
    "wlan",
    "wireless",
    "network",
    "router",
    "wpa",
    "wpa2",
    "wpa3",
    "psk",
    "wep",
    "security",
    "pass",
)
_ANSWER_BEFORE = re.compile(r"(?i)(?:security|secret)[ \t]+(?:question['\u2019]?s?[ \t]+)?$")
# "my netflix login is jane@example.com / Summer2024!", "login: bob / hunter2x": a user, then a
# password (mixed letters and digits or symbols, or quoted) beside it; only after a login's name.
LOGIN_PAIR = re.compile(
    r"(?i)(?:log[ -]?in|sign[ -]?in|log[ -]?on|credentials?|creds)s?"
    r"(?:[ \t]+(?:details|info))?"
    r"(?P<about>[ \t]+(?:for|to|of|on|at)(?:[ \t]+[\w.@'-]{1,30}){1,3}?)?"
    r"(?:[ \t]*[:=]|[ \t]+(?:is|are|was|were)\b(?:[ \t]*:)?)[ \t]*"
    r"(?P<user>[A-Za-z0-9][\w.@+-]{0,63}?)"
    r"(?:[ \t]+/[ \t]*|[ \t]*/[ \t]+|[ \t]*\|[ \t]*|:|[ \t]*,[ \t]*)"
    rf"(?:[{_OPEN_QUOTE}](?P<quoted>[^\s{_CLOSE_QUOTE}]{{4,64}})[{_CLOSE_QUOTE}]|(?P<bare>[^\s\"'`]{{4,64}}+))"
    r"(?=[ \t]*(?:\n|$|[(\u2013\u2014-]|(?:and|but|or|so|please|if)\b))"
)


_LOGIN_STARTS = ("login", "log in", "log-in", "logon", "log on", "log-on", "sign", "cred")


def _value_stated(text: str, i: int, m: re.Match[str], words: bool) -> bool:
    """The value of a statement matched at `i` is a password: a literal, or (where `words`) a plain
    word or quoted words, ending the clause, in prose rather than code."""
    quoted = m["quoted"] is not None
    value = m["quoted"] if quoted else m["bare"].rstrip(_TRAILING_PUNCT)
    clause_end = quoted or m["after"] is not None or value != m["bare"]
    if not (clause_end or m["sep"] in (":", "=")) or _ADJECTIVE_COMPOUND.fullmatch(value):
        return False
    literal = _is_password_literal(value, quoted)
    wordy = (
        words
        and (quoted or clause_end)
        and (_is_word_password(value) or (quoted and _is_quoted_phrase(value)))
    )
    return bool(literal or wordy) and _stated_in_prose(text, i, m)


def has_stated_credential(text: str, low: str, key: bool, cred: bool) -> bool:
    """A wifi key, a security question's answer or a login pair stated in prose: read as a password.
    `key`, `cred`: whether "key" and "cred" are in `low` (the caller's gates, shared with other rules)."""
    for i, _ in positions(low, ("key", "psk") if key else ("psk",)):
        prev = low[max(0, i - 12) : i].split()[-1:] if low[i] == "k" else ()
        if prev and not prev[0].endswith(_NETWORK_TAILS):
            continue  # a set lookup first ("the key is ..."), the regex to confirm
        before = _NETWORK_BEFORE.search(text, max(0, i - 40), i) if prev else None
        at = before.start() if before else i
        m = NETWORK_KEY.match(text, at) if not (at and text[at - 1].isalnum()) else None
        if m and _value_stated(text, at, m, words=True):
            return True
    for i, _ in positions(low, ("answer",)):
        before = _ANSWER_BEFORE.search(text, max(0, i - 40), i)
        at = before.start() if before else i
        m = SECURITY_ANSWER.match(text, at) if not (at and text[at - 1].isalnum()) else None
        if m and _value_stated(text, at, m, words=True):
            return True
    for i, _ in positions(low, ("log", "sign", "cred") if cred else ("log", "sign")):
        if (i and low[i - 1].isalnum()) or not low.startswith(_LOGIN_STARTS, i):
            continue  # "blog", "design", "logic": a prefix test before the regex
        m = LOGIN_PAIR.match(text, i)
        if not m:
            continue
        value = m["quoted"] or m["bare"].rstrip(_TRAILING_PUNCT)
        mixed = re.search("[A-Za-z]", value) and re.search("[^A-Za-z]", value)
        quoted = m["quoted"] is not None  # quoted, words may be the password: "admin / 'blue-whale'"
        if (mixed or quoted) and (
            _is_password_literal(value, quoted) or (quoted and _is_word_password(value))
        ):
            line = text[text.rfind("\n", 0, i) + 1 : i].lstrip(" \t-*>#\u2022")
            if not _CODE_LINE.match(line) and not _UNIT.fullmatch(value):
                return True
    return False
