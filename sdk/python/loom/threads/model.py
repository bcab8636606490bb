"""The coding-session thread: one typed model shared by the client library, the server and the
CLI (the third seed's ``Thread``). On the wire: snake_case field names, enums in snake_case,
``conversation`` = ``{messages: [...]}``, ``metadata`` = ``{title, tags, …}``;
``Thread.model_json_schema()`` is the published schema."""

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Literal

import uuid6
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

ID_PATTERN = r"^T-[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"
TEXT_MAX = 1_000_000  # a message's content
SHORT = 1_024  # paths, names, URLs
MESSAGES_MAX = 20_000


def new_id() -> str:
    """``T-`` and a UUIDv7: sortable by creation time."""
    return f"T-{uuid6.uuid7()}"


def now() -> datetime:
    return datetime.now(UTC)


class ThreadVisibility(StrEnum):
    organization = "organization"  # every token of the namespace (the default)
    private = "private"  # synced, but only its owner reads it
    public = "public"  # any valid token


class AgentStateKind(StrEnum):
    waiting_for_user_input = "waiting_for_user_input"
    calling_llm = "calling_llm"
    processing_llm_response = "processing_llm_response"
    executing_tools = "executing_tools"
    post_tools_hook = "post_tools_hook"
    error = "error"
    shutting_down = "shutting_down"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", use_enum_values=False)


class ToolCall(_Strict):
    id: str = Field(min_length=1, max_length=256)
    tool_name: str = Field(min_length=1, max_length=256)
    arguments_json: Any = None


class MessageSnapshot(_Strict):
    role: Literal["user", "assistant", "tool", "system"]
    content: str = Field(default="", max_length=TEXT_MAX)
    tool_calls: list[ToolCall] = Field(default_factory=list, max_length=256)  # an assistant's
    tool_call_id: str | None = Field(default=None, max_length=256)  # a tool message's
    tool_name: str | None = Field(default=None, max_length=256)


class ConversationSnapshot(_Strict):
    messages: list[MessageSnapshot] = Field(default_factory=list, max_length=MESSAGES_MAX)


class AgentStateSnapshot(_Strict):
    kind: AgentStateKind = AgentStateKind.waiting_for_user_input
    retries: int = Field(default=0, ge=0, le=1_000_000)
    last_error: str | None = Field(default=None, max_length=100_000)
    pending_tool_calls: list[ToolCall] = Field(default_factory=list, max_length=256)


class ThreadMetadata(BaseModel):
    """``title`` and ``tags``, and whatever else a client keeps here."""

    model_config = ConfigDict(extra="allow")

    title: str | None = Field(default=None, max_length=SHORT)
    tags: list[str] = Field(default_factory=list, max_length=100)


class Thread(_Strict):
    # Identity
    id: str = Field(default_factory=new_id, pattern=ID_PATTERN)
    version: int = Field(default=0, ge=0, le=2**63 - 1)  # optimistic locking: the server's count of saves
    created_at: AwareDatetime = Field(default_factory=now)
    updated_at: AwareDatetime = Field(default_factory=now)
    last_activity_at: AwareDatetime = Field(default_factory=now)
    # Workspace context
    workspace_root: str | None = Field(default=None, max_length=SHORT)
    cwd: str | None = Field(default=None, max_length=SHORT)
    loom_version: str | None = Field(default=None, max_length=64)
    # Git metadata
    git_branch: str | None = Field(default=None, max_length=SHORT)
    git_remote_url: str | None = Field(default=None, max_length=SHORT)
    git_initial_branch: str | None = Field(default=None, max_length=SHORT)
    git_initial_commit_sha: str | None = Field(default=None, max_length=64)
    git_current_commit_sha: str | None = Field(default=None, max_length=64)
    git_commits: list[str] = Field(default_factory=list, max_length=10_000)
    git_start_dirty: bool | None = None
    git_end_dirty: bool | None = None
    # LLM configuration
    provider: str | None = Field(default=None, max_length=128)
    model: str | None = Field(default=None, max_length=256)
    # Conversation data
    conversation: ConversationSnapshot = Field(default_factory=ConversationSnapshot)
    agent_state: AgentStateSnapshot = Field(default_factory=AgentStateSnapshot)
    metadata: ThreadMetadata = Field(default_factory=ThreadMetadata)
    # Sync metadata
    is_private: bool = False  # never leaves the machine
    visibility: ThreadVisibility = ThreadVisibility.organization
    is_shared_with_support: bool = False

    def touch(self) -> None:
        """After activity: ``updated_at`` and ``last_activity_at`` move to now."""
        self.updated_at = self.last_activity_at = now()

    def make_private(self) -> None:
        self.is_private, self.visibility = True, ThreadVisibility.private

    def summary(self) -> "ThreadSummary":
        return ThreadSummary(
            id=self.id,
            version=self.version,
            title=self.metadata.title,
            message_count=len(self.conversation.messages),
            last_activity_at=self.last_activity_at,
            workspace_root=self.workspace_root,
            git_branch=self.git_branch,
            git_current_commit_sha=self.git_current_commit_sha,
            git_end_dirty=self.git_end_dirty,
            is_private=self.is_private,
            visibility=self.visibility,
        )


class ThreadSummary(_Strict):
    """What a listing shows of a thread, without its messages."""

    id: str
    version: int
    title: str | None
    message_count: int
    last_activity_at: AwareDatetime
    workspace_root: str | None
    git_branch: str | None
    git_current_commit_sha: str | None
    git_end_dirty: bool | None
    is_private: bool
    visibility: ThreadVisibility
