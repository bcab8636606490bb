"""``LocalThreadStore``: threads as pretty-printed JSON files under the XDG data directory
(``$XDG_DATA_HOME/loom/threads/``, else ``~/.local/share/loom/threads/``), one a thread.

A save writes a temporary file beside the thread's, flushes it to disk and renames it over the
old one, so a crash leaves the old file or the new one, never half of one. ``search`` is the
fallback when the server is away: substrings of the title, branch, remote URL, tags and message
content, and prefixes of commit SHAs."""

from __future__ import annotations  # the store has a method named list

import builtins
import os
import re
import tempfile
from pathlib import Path

from loom.threads.model import ID_PATTERN, Thread, ThreadSummary

ID = re.compile(ID_PATTERN)


def data_dir() -> Path:
    """Loom's XDG data directory on this machine."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "loom"


def write_atomically(path: Path, text: str) -> None:
    """``text`` as the file at ``path``, all of it or none of it, even across a crash."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)  # the rename itself survives a power cut
    finally:
        os.close(directory)


class LocalThreadStore:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)

    @classmethod
    def from_xdg(cls) -> LocalThreadStore:
        return cls(data_dir() / "threads")

    def path(self, thread_id: str) -> Path:
        if not ID.match(thread_id):
            raise ValueError(f"{thread_id!r} is not a thread id (T-<uuidv7>)")
        return self.root / f"{thread_id}.json"

    def load(self, thread_id: str) -> Thread | None:
        try:
            text = self.path(thread_id).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        return Thread.model_validate_json(text)

    def save(self, thread: Thread) -> None:
        write_atomically(self.path(thread.id), thread.model_dump_json(indent=2) + "\n")

    def delete(self, thread_id: str) -> None:
        self.path(thread_id).unlink(missing_ok=True)

    def threads(self) -> list[Thread]:
        """Every thread stored here (a file that does not parse is passed over)."""
        found = []
        for path in self.root.glob("T-*.json"):
            try:
                found.append(Thread.model_validate_json(path.read_text(encoding="utf-8")))
            except (OSError, ValueError):
                continue
        return found

    def list(self, limit: int = 50) -> list[ThreadSummary]:
        """The newest ``limit`` threads by last activity."""
        newest = sorted(self.threads(), key=lambda t: t.last_activity_at, reverse=True)
        return [thread.summary() for thread in newest[:limit]]

    def search(self, query: str, limit: int = 20) -> builtins.list[ThreadSummary]:  # `list`: the method above
        """Threads matching ``query``, newest first."""
        wanted = query.strip().lower()
        if not wanted:
            return []
        found = [thread for thread in self.threads() if matches(thread, wanted)]
        found.sort(key=lambda t: t.last_activity_at, reverse=True)
        return [thread.summary() for thread in found[:limit]]


def matches(thread: Thread, query: str) -> bool:
    """Whether a thread matches a lower-cased query (the seed's local search)."""
    fields = [thread.metadata.title, thread.git_branch, thread.git_remote_url, *thread.metadata.tags]
    if any(value and query in value.lower() for value in fields):
        return True
    if any(sha.lower().startswith(query) for sha in thread.git_commits):
        return True
    return any(query in message.content.lower() for message in thread.conversation.messages)
