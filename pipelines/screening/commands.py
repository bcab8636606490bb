"""Secrets given to programs, for `pipelines.screening`: a password on a command line (``sshpass -p
…``, ``docker login -p …``, ``mysql -p…``, ``curl -u user:pass``, ``htpasswd -b file user pass``,
``PGPASSWORD=… psql``, and their kin) and a session cookie's value (in a ``Cookie:`` or
``Set-Cookie:`` header, as ``sessionid=…`` or stated in prose).

A command is read only from its own name on: the flags that carry a password differ by program
(``-p`` is a password to sshpass, a port to ``docker run`` and ``ssh``, and to mysql a password
only when glued to the flag), so each program has its own. The value must be a literal: a variable
(``$PASS``, ``${{ secrets.X }}``, ``%PW%``), a mask (``****``), a stand-in (``<password>``,
``PASSWORD``, ``changeme``, ``root``) or a prompt (``-p`` with nothing after it) is none. Pure stdlib.
"""

from __future__ import annotations

import re

from pipelines.screening.passwords import (
    NOT_PASSWORD_WORDS,
    PASSWORD_PLACEHOLDERS,
    is_password_literal,
    is_word_password,
)
from pipelines.screening.text import positions, shannon_entropy

# --- passwords on a command line ------------------------------------------------------------------
# Where a program's name may start: a line, a prompt, a pipe, `sudo`, a path ("/usr/bin/mysql").
_COMMAND_BEFORE = " \t\n$;|&(`'\"/>"
_COMMAND_NAMES = (
    "sshpass", "docker", "podman", "nerdctl", "buildah", "skopeo", "oras", "helm", "crane", "regctl",
    "mysql", "mariadb", "mongo", "redis-cli", "curl", "wget", "htpasswd", "ldap", "sqlcmd", "bcp",
    "openssl", "smbclient", "lftp", "zip", "unzip", "7z", "keytool", "jarsigner", "mosquitto_",
    "ipmitool", "az", "sqlplus", "xfreerdp",
)  # fmt: skip
_COMMAND = re.compile(  # the whole name, as a program's: "mysqldump", "mongosh", "ldapsearch"
    r"(?:sshpass|docker|podman|nerdctl|buildah|skopeo|oras|helm|crane|regctl|az|redis-cli|curl|wget"
    r"|htpasswd|sqlcmd|bcp|openssl|smbclient|lftp|zip|unzip|7za?|keytool|jarsigner|ipmitool|sqlplus"
    r"|xfreerdp|mysql\w{0,8}|mariadb[\w-]{0,8}|mongo\w{0,8}|ldap\w{2,8}|mosquitto_\w{3})(?:\.exe)?"
    r"(?=[ \t])"
)
# A shell word: unquoted runs and quoted strings glued together ("-p'x y'", "--user=\"a:b\"").
_WORD = re.compile(r"""(?:[^\s'"]++|'[^'\n]*+'|"[^"\n]*+")++""")
_END_OF_COMMAND = {"|", "||", "&&", ";", "&", ">", ">>", "<", "2>"}
_LOGIN_TOOLS = {"docker", "podman", "nerdctl", "buildah", "skopeo", "oras", "helm", "crane", "regctl", "az"}
# Flags whose next word (or "=value") is a password, by program; "*" for every program read here.
_PASSWORD_FLAGS = {
    "*": {"--password", "--passwd"},
    "sshpass": {"-p"},
    "login": {"-p", "--password"},  # docker, podman, helm registry, oras, az ... login
    "mongo": {"-p", "--password"},
    "redis-cli": {"-a", "--pass", "--password"},
    "wget": {"--password", "--http-password", "--ftp-password", "--proxy-password"},
    "ldap": {"-w"},
    "sqlcmd": {"-P"},
    "bcp": {"-P"},
    "zip": {"-P"},
    "unzip": {"-P"},
    "mosquitto": {"-P"},
    "ipmitool": {"-P"},
    "keytool": {"-storepass", "-keypass", "-srcstorepass", "-deststorepass"},
    "jarsigner": {"-storepass", "-keypass"},
    "openssl": {"-passin", "-passout", "-pass", "-k", "-password"},
}
# Flags glued to their password ("-pS3cret", "-aS3cret"): for mysql "-p value" is the database.
_GLUED_FLAGS = {"sshpass": "-p", "mysql": "-p", "mariadb": "-p", "7z": "-p", "redis-cli": "-a", "ldap": "-w"}
_EQUALS_ONLY = frozenset({"--password", "--passwd"})
_USER_FLAGS = {"-u", "--user", "-U", "--proxy-user"}  # curl's user:password
_PORT = re.compile(r"[0-9]+(?::[0-9]+)*(?:/(?:tcp|udp))?")  # "8080:80" is docker run's, never a password
_STAND_IN_NAME = re.compile(r"[A-Z][A-Z_]*|[A-Z][A-Z0-9]*_[A-Z0-9_]+")  # PASSWORD, DB_PASS, MY_PW_2


def _family(name: str) -> str:
    for prefix in ("mysql", "mariadb", "mongo", "ldap", "mosquitto", "7z"):
        if name.startswith(prefix):
            return prefix
    return name.removesuffix(".exe")


def _unquote(word: str) -> tuple[str, bool]:
    quoted = "'" in word or '"' in word
    return (word.replace("'", "").replace('"', "") if quoted else word), quoted


def command_value_ok(raw: str) -> bool:
    """A password given to a program: a literal, or a plain word that is no stand-in."""
    value, quoted = _unquote(raw)
    value = value.strip()
    low = value.lower()
    if not value or value.startswith(("-", "$", "%", "<", "{", "*", "[", "(", "@", "~", "/", "\\")):
        return False  # another flag, a variable, a placeholder, a mask, a file
    if any(m in value for m in ("${", "$(", "{{", "%(", "<", ">", "$")) or "://" in value:
        return False
    if any(p in low for p in PASSWORD_PLACEHOLDERS) or low in NOT_PASSWORD_WORDS:
        return False
    if _STAND_IN_NAME.fullmatch(value) or _PORT.fullmatch(value) or len(set(value)) < 3:
        return False
    return is_password_literal(value, quoted) or is_word_password(value)


def _segment(text: str, start: int) -> str:
    """The command's rest of line (continued lines joined), at most 1,000 chars."""
    end = start
    while True:
        nl = text.find("\n", end, start + 1000)
        if nl == -1:
            return text[start : start + 1000]
        if text[nl - 1 : nl] != "\\":
            return text[start:nl]
        end = nl + 1


def _words(segment: str) -> tuple[list[str], int]:
    """The command's words (up to a pipe, ";" or "&&", at most 60) and where they end."""
    words: list[str] = []
    end = 0
    for m in _WORD.finditer(segment):
        if m.group() in _END_OF_COMMAND or len(words) >= 60:
            break
        words.append(m.group())
        end = m.end()
        if m.group().endswith((";", "|")):
            break
    return words, end


def _flag_values(words: list[str], flags: set[str], glued_only: frozenset[str] = frozenset()) -> list[str]:
    """The values given to `flags`: "--password=x", "--password x", "-p x" (but for `glued_only`
    flags only "--password=x": mysql's "--password mydb" prompts, and mydb is the database)."""
    found = []
    for i, word in enumerate(words):
        flag, eq, value = word.partition("=")
        if flag not in flags:
            continue
        if eq:
            found.append(value)
        elif i + 1 < len(words) and flag not in glued_only:
            found.append(words[i + 1])
    return found


def _command_has_password(family: str, words: list[str]) -> bool:
    flags = set(_PASSWORD_FLAGS["*"])
    if family in _LOGIN_TOOLS:
        if "login" not in (w.lower() for w in words[:3]):
            return False  # docker run -p 8080:80: a port
        flags |= _PASSWORD_FLAGS["login"]
    flags |= _PASSWORD_FLAGS.get(family, set())
    values = _flag_values(words, flags, _EQUALS_ONLY if family in ("mysql", "mariadb") else frozenset())
    glued = _GLUED_FLAGS.get(family)
    if glued:
        values += [w[len(glued) :] for w in words if w.startswith(glued) and len(w) > len(glued) + 1]
    if family == "openssl":
        values = [v.removeprefix("pass:") for v in values if not v.startswith(("env:", "file:", "fd:"))]
    if family == "curl":
        users = _flag_values(words, _USER_FLAGS) + [w[2:] for w in words if w.startswith("-u") and len(w) > 3]
        values += [_unquote(u)[0].partition(":")[2] for u in users if ":" in u]
    elif family == "smbclient":
        values += [u.partition("%")[2] for u in _flag_values(words, {"-U", "--user"}) if "%" in u]
    elif family == "lftp":
        values += [u.partition(",")[2] for u in _flag_values(words, {"-u"}) if "," in u]
    elif family == "sqlplus":
        values += [w.partition("/")[2].partition("@")[0] for w in words[:2] if "/" in w and w[0] != "/"]
    elif family == "xfreerdp":
        values += [w[3:] for w in words if w.startswith("/p:")]
    elif family == "htpasswd":
        values += _htpasswd_password(words)
    return any(command_value_ok(v) for v in values)


def _htpasswd_password(words: list[str]) -> list[str]:
    """htpasswd -b[c...] FILE USER PASSWORD, or -nb USER PASSWORD."""
    letters, positional, skip = "", [], False
    for word in words:
        if skip:
            skip = False
        elif word.startswith("-") and word[1:].isalpha():
            letters += word[1:]
            skip = word in ("-C", "-r")  # they take a number
        else:
            positional.append(word)
    if "b" not in letters:
        return []
    at = 1 if "n" in letters else 2
    return positional[at : at + 1]


# Environment variables the programs read a password from: "PGPASSWORD=x psql", "export MYSQL_PWD=x".
_PASSWORD_ENV = (
    "PGPASSWORD", "MYSQL_PWD", "REDISCLI_AUTH", "SSHPASS", "RSYNC_PASSWORD", "LFTP_PASSWORD",
    "SQLCMDPASSWORD", "RESTIC_PASSWORD", "BORG_PASSPHRASE", "ISQL_PASSWORD", "SMBPASSWD",
    "VAULT_PASSWORD",
)  # fmt: skip
_ENV_VALUE = re.compile(r"[ \t]*=[ \t]*(?P<value>'[^'\n]*'|\"[^\"\n]*\"|[^\s'\";|&]+)")
_ENV_BEFORE = " \t\n;|&(`\"'"


def has_command_password(text: str, low: str) -> bool:
    """A password given on a command line or in a program's environment variable."""
    read_to = -1
    for i, _ in sorted(positions(low, _COMMAND_NAMES)):
        if i < read_to or (i and text[i - 1] not in _COMMAND_BEFORE):
            continue  # read with the command before it ("sudo sshpass ..."), or in a word: "brazil"
        m = _COMMAND.match(low, i)
        if not m:
            continue
        words, end = _words(_segment(text, m.end()))
        read_to = m.end() + end
        if words and _command_has_password(_family(m.group()), words):
            return True
    if "=" in text:
        for i, name in positions(text, _PASSWORD_ENV):
            if i and text[i - 1] not in _ENV_BEFORE and not text.startswith(("$env:", "env:"), i - 5):
                continue
            m = _ENV_VALUE.match(text, i + len(name))
            if m and command_value_ok(m["value"]):
                return True
    return False


# --- session cookies ---------------------------------------------------------------------------------
# A cookie's name says it holds a session: "sessionid", "PHPSESSID", "JSESSIONID", "connect.sid",
# "laravel_session", "_gitlab_session", "next-auth.session-token", "auth_token", "li_at", "SAPISID".
_SESSION_NAME = re.compile(
    r"(?i).*(?:sess|auth|remember|logged_in|login|token).*|(?:.*[^a-z])?sid|sid[^a-z].*|(?:sap|ap|h)isid"
    r"|li_at|xs|(?:__host-|__secure-).*"
)
_NOT_SESSION_NAME = re.compile(r"(?i)ssid|.*(?:timeout|ttl|name|expir|max|age|count|length|path|domain)")
_COOKIE_VALUE = re.compile(r"[A-Za-z0-9+/=._~%:|!*-]{16,4096}")
_COOKIE_PLACEHOLDERS = ("xxxx", "your", "example", "deleted", "placeholder", "redacted", "dummy", "...")
_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
_SLUG = re.compile(r"(?:[A-Za-z][a-z]*|[A-Z]+|\d+)(?:[-_./](?:[A-Za-z][a-z]*|[A-Z]+|\d+))+")


def session_value_ok(value: str, header: bool) -> bool:
    """A cookie's value that is a session's: long, random, no stand-in (a UUID only in a header)."""
    value = value.strip("\"'")
    low = value.lower()
    if not _COOKIE_VALUE.fullmatch(value) or any(p in low for p in _COOKIE_PLACEHOLDERS):
        return False
    if _UUID.fullmatch(value):
        return header
    if not re.search("[0-9]", value) and not (re.search("[a-z]", value) and re.search("[A-Z]", value)):
        return False
    # (No test of words: the name says what the value is, and a random lower-case id such as PHP's
    # "jycjuom32htvjaurkjqdurungl" has vowels enough to look like words.)
    return not _SLUG.fullmatch(value) and shannon_entropy(value) >= 3.0


_PAIR = re.compile(r"[ \t]*(?P<name>[^\s=;,]{1,100})=(?P<value>[^\s;,]{0,4096})")
_COOKIE_HEADER = re.compile(r"(?i)(?:set-)?cookie[\"']?[ \t]*:")
_COOKIE_FLAG = re.compile(r"(?:-b|--cookie)[ \t]+[\"']?")  # curl -b "a=b; c=d"
# "my session cookie is 8f3k...", "the value of the session cookie: 8f3k..."
_COOKIE_STATED = re.compile(
    r"(?i)cookie(?:[ \t]+(?:value|string|id))?(?:[ \t]+(?:for|of|on|from)(?:[ \t]+[\w.'-]{1,30}){1,3}?)?"
    r"(?:[ \t]*[:=]|[ \t]+(?:is|was)\b(?:[ \t]*:)?)[ \t]*[\"'`]?(?P<value>[\w+/=.~%:-]{16,4096})"
)
_SESSION_BEFORE = re.compile(r"(?i)(?:session(?:[ _-]?id)?|auth|login)[ \t]+$")


def _pairs(text: str, start: int, first_only: bool) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    at = start
    while len(found) < 40:
        m = _PAIR.match(text, at)
        if not m:
            break
        found.append((m["name"].strip("\"'"), m["value"]))
        if first_only or text[m.end() : m.end() + 1] != ";":
            break
        at = m.end() + 1
    return found


def has_session_cookie(text: str, low: str) -> bool:
    """A session cookie's value: in a Cookie/Set-Cookie header or curl's -b, as name=value, or stated."""
    if "cookie" in low:
        for i, _ in positions(low, ("cookie",)):
            m = _COOKIE_HEADER.match(text, i - 4 if i >= 4 and low.startswith("set-", i - 4) else i)
            if m:
                first_only = low.startswith("set-", m.start())
                pairs = _pairs(text, m.end(), first_only)
                if any(
                    _SESSION_NAME.fullmatch(n)
                    and not _NOT_SESSION_NAME.fullmatch(n)
                    and session_value_ok(v, True)
                    for n, v in pairs
                ):
                    return True
            if _SESSION_BEFORE.search(text, max(0, i - 20), i):
                stated = _COOKIE_STATED.match(text, i)
                if stated and session_value_ok(stated["value"], False):
                    return True
    if "=" not in text:
        return False
    for i, _ in positions(low, ("sess", "sid", "auth_token", "remember", "li_at")):
        start = i
        while start and (text[start - 1].isalnum() or text[start - 1] in "_.-:"):
            start -= 1
        if start and text[start - 1] == "=":
            continue  # inside a value
        m = _PAIR.match(text, start)
        if not m or m.start("name") != start:
            continue
        name = m["name"]
        if _SESSION_NAME.fullmatch(name) and not _NOT_SESSION_NAME.fullmatch(name):
            if session_value_ok(m["value"], False):
                return True
    return False
