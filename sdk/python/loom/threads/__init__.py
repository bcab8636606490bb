"""Coding-session threads (the third seed): the ``Thread`` model, the local store, the pending
sync queue and the git snapshot a coding agent embeds."""

from loom.threads.git import detect_repo_status, normalize_remote, snapshot_git_state
from loom.threads.local import LocalThreadStore, data_dir
from loom.threads.model import (
    AgentStateKind,
    AgentStateSnapshot,
    ConversationSnapshot,
    MessageSnapshot,
    Thread,
    ThreadMetadata,
    ThreadSummary,
    ThreadVisibility,
    ToolCall,
)
from loom.threads.queue import PendingSyncQueue
from loom.threads.sync import SyncingThreadStore, SyncReport, ThreadSyncClient, VersionConflict, merge

__all__ = [
    "AgentStateKind",
    "AgentStateSnapshot",
    "ConversationSnapshot",
    "LocalThreadStore",
    "MessageSnapshot",
    "PendingSyncQueue",
    "SyncReport",
    "SyncingThreadStore",
    "Thread",
    "ThreadMetadata",
    "ThreadSummary",
    "ThreadSyncClient",
    "ThreadVisibility",
    "ToolCall",
    "VersionConflict",
    "data_dir",
    "detect_repo_status",
    "merge",
    "normalize_remote",
    "snapshot_git_state",
]
