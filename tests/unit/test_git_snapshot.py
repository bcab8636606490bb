"""The git snapshot against real temporary repositories: initial values once, current ones every
save, commits accumulated, the remote URL normalised, dirty flags; no repository, no change."""

import subprocess

import pytest
from loom.threads import Thread, normalize_remote, snapshot_git_state


def git(repo, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture
def repo(tmp_path):
    path = tmp_path / "project"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "dev@example.com")
    git(path, "config", "user.name", "Dev")
    git(path, "remote", "add", "origin", "git@github.com:Acme/API.git")
    (path / "README").write_text("one\n")
    git(path, "add", "README")
    git(path, "commit", "-q", "-m", "first")
    return path


def test_initial_state_once_current_state_every_save_and_commits_accumulate(repo):
    thread = Thread()
    snapshot_git_state(thread, repo)
    first = git(repo, "rev-parse", "HEAD")
    assert (thread.git_initial_branch, thread.git_initial_commit_sha, thread.git_start_dirty) == (
        "main",
        first,
        False,
    )
    assert thread.git_remote_url == "github.com/Acme/API" and thread.git_commits == [first]

    git(repo, "checkout", "-q", "-b", "feature/auth")
    (repo / "README").write_text("two\n")
    git(repo, "commit", "-q", "-am", "second")
    (repo / "README").write_text("three, uncommitted\n")
    snapshot_git_state(thread, repo)
    second = git(repo, "rev-parse", "HEAD")
    assert (thread.git_branch, thread.git_current_commit_sha, thread.git_end_dirty) == (
        "feature/auth",
        second,
        True,
    )
    assert (thread.git_initial_branch, thread.git_initial_commit_sha, thread.git_start_dirty) == (
        "main",
        first,
        False,
    )
    assert thread.git_commits == [first, second]
    snapshot_git_state(thread, repo)
    assert thread.git_commits == [first, second]  # a commit once


def test_a_detached_head_and_a_directory_outside_git(repo, tmp_path):
    thread = Thread()
    git(repo, "checkout", "-q", "--detach")
    snapshot_git_state(thread, repo)
    assert thread.git_branch is None and thread.git_current_commit_sha == git(repo, "rev-parse", "HEAD")
    elsewhere = tmp_path / "not-a-repo"
    elsewhere.mkdir()
    untouched = Thread()
    snapshot_git_state(untouched, elsewhere)
    assert untouched == Thread.model_validate({**untouched.model_dump(), "git_commits": []})
    assert untouched.git_branch is None and untouched.git_commits == []


@pytest.mark.parametrize(
    ("url", "slug"),
    [
        ("git@github.com:user/repo.git", "github.com/user/repo"),
        ("https://github.com/user/repo.git", "github.com/user/repo"),
        ("https://user:token@GitHub.com/user/repo/", "github.com/user/repo"),
        ("ssh://git@gitlab.example.com:2222/group/sub/repo.git", "gitlab.example.com/group/sub/repo"),
        ("github.com/user/repo", "github.com/user/repo"),
    ],
)
def test_remote_urls_are_normalised(url, slug):
    assert normalize_remote(url) == slug
