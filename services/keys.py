"""Secrets Loom generates once per data directory and keeps in files only its user may read: the
embedded PostgreSQL's password (``postgres.secret``) and the operator key (``operator.key``, which
the API takes as the operator's bearer token so that ``loom search`` can ask the running API)."""

import os
import secrets
from pathlib import Path


def kept(path: Path) -> str:
    """The secret in ``path``, generated there on first use (mode 0600: Loom's user alone reads it).
    Several processes may ask at once: one creates the file, the others read what it wrote."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        if path.stat().st_mode & 0o077:
            path.chmod(0o600)
        secret = path.read_text().strip()
        if secret:
            return secret
        # An empty file: a writer that died between creating and writing it. Write it now.
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    with os.fdopen(fd, "w") as f:
        f.write(secrets.token_urlsafe(32) + "\n")
    return path.read_text().strip()
