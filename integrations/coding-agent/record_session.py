"""An example integration: how a coding agent records its session as a Loom thread through the
client library (``loom.threads``). It plays a short scripted session (a user asks, the assistant
calls a tool, the tool answers, the assistant replies), saving the thread the way the seed's
lifecycle does: on creation, after each step, and on shutdown with the git state snapshotted.

    LOOM_URL=http://127.0.0.1:7777 LOOM_TOKEN=… python integrations/coding-agent/record_session.py

Prints the thread's id. With the server away the thread is kept on this machine and synced by the
next save of any thread or `loom threads sync`."""

import argparse
import os
from pathlib import Path

from loom.threads import (
    AgentStateKind,
    MessageSnapshot,
    SyncingThreadStore,
    Thread,
    ThreadSyncClient,
    ToolCall,
    snapshot_git_state,
)


def record(store: SyncingThreadStore, workspace: Path, title: str) -> Thread:
    # 1. Creation
    thread = Thread(workspace_root=str(workspace), cwd=str(workspace), provider="example", model="scripted")
    thread.metadata.title = title
    snapshot_git_state(thread, workspace)
    store.save(thread)
    # 2. User input
    thread.conversation.messages.append(MessageSnapshot(role="user", content="Add error handling to login"))
    # 3. The model's answer, with a tool call
    call = ToolCall(id="call_1", tool_name="read_file", arguments_json={"path": "src/auth.py"})
    thread.conversation.messages.append(
        MessageSnapshot(role="assistant", content="I'll read the login function first.", tool_calls=[call])
    )
    thread.agent_state.kind = AgentStateKind.executing_tools
    thread.agent_state.pending_tool_calls = [call]
    store.save(thread)
    # 4. Tool execution
    thread.conversation.messages.append(
        MessageSnapshot(
            role="tool",
            tool_call_id="call_1",
            tool_name="read_file",
            content='{"contents": "def login(): ..."}',
        )
    )
    thread.conversation.messages.append(
        MessageSnapshot(role="assistant", content="login() now raises AuthError on a bad password.")
    )
    # 5. State update, the git state again, and the last save, synced before the process exits
    thread.agent_state.kind = AgentStateKind.waiting_for_user_input
    thread.agent_state.pending_tool_calls = []
    snapshot_git_state(thread, workspace)
    thread.touch()
    store.save_and_sync(thread)
    return thread


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--title", default="Add error handling to login")
    parser.add_argument("--workspace", type=Path, default=Path.cwd())
    args = parser.parse_args()
    url, token = os.environ.get("LOOM_URL"), os.environ.get("LOOM_TOKEN")
    store = SyncingThreadStore.from_xdg(ThreadSyncClient(url, token) if url and token else None)
    try:
        thread = record(store, args.workspace, args.title)
    finally:
        store.close()
    print(thread.id)


if __name__ == "__main__":
    main()
