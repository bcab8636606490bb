"""The git state of a workspace, snapshotted into a thread (the seed's ``snapshot_git_state``):
the initial branch, commit and dirty flag once, the current ones every save, every commit seen,
and the remote URL normalised (``github.com/user/repo``). Git missing, or no repository, leaves
the thread as it is."""

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from loom.threads.model import Thread

SCP_LIKE = re.compile(r"^(?:[^@/]+@)?(?P<host>[^:/]+):(?P<path>(?!//).+)$")  # git@github.com:user/repo


@dataclass(frozen=True)
class RepoStatus:
    branch: str | None  # None when HEAD is detached
    head_sha: str | None  # None before the first commit
    is_dirty: bool
    remote_slug: str | None


def _git(workspace: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(workspace), *args], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def normalize_remote(url: str) -> str:
    """``host/owner/repo`` from any of git's remote spellings: no scheme, credentials, port,
    ``.git`` or trailing slash; the host lower-cased."""
    url = url.strip()
    if "://" in url:
        rest = url.split("://", 1)[1]
        rest = rest.rsplit("@", 1)[-1] if "@" in rest.split("/", 1)[0] else rest
        host, _, path = rest.partition("/")
        host = host.split(":", 1)[0]
    elif match := SCP_LIKE.match(url):
        host, path = match["host"], match["path"]
    else:
        return url.removesuffix(".git").rstrip("/")
    path = path.strip("/").removesuffix(".git").rstrip("/")
    return f"{host.lower()}/{path}"


def detect_repo_status(workspace: Path) -> RepoStatus | None:
    """The repository's status at ``workspace``; None when it is not in one (or git is missing)."""
    if _git(workspace, "rev-parse", "--is-inside-work-tree") != "true":
        return None
    remote = _git(workspace, "remote", "get-url", "origin")
    return RepoStatus(
        branch=_git(workspace, "symbolic-ref", "--short", "-q", "HEAD") or None,
        head_sha=_git(workspace, "rev-parse", "--verify", "-q", "HEAD") or None,
        is_dirty=bool(_git(workspace, "status", "--porcelain")),
        remote_slug=normalize_remote(remote) if remote else None,
    )


def snapshot_git_state(thread: Thread, workspace: Path) -> None:
    status = detect_repo_status(workspace)
    if status is None:
        return
    if thread.git_initial_branch is None:  # the first snapshot
        thread.git_initial_branch = status.branch
        thread.git_initial_commit_sha = status.head_sha
        thread.git_start_dirty = status.is_dirty
    thread.git_branch = status.branch
    thread.git_current_commit_sha = status.head_sha
    thread.git_end_dirty = status.is_dirty
    if status.head_sha and status.head_sha not in thread.git_commits:
        thread.git_commits.append(status.head_sha)
    if thread.git_remote_url is None:
        thread.git_remote_url = status.remote_slug
