"""The ids the memory plane derives from the conversation plane's names, each by one function.

A LoomSession's ``interactionProcessId`` is the conversation's ``run_id`` when that is a uuid, and
a stable uuid (v5) of it when it is not; a turn with no run belongs to the interaction of its
thread. ``tenantId`` is the namespace's stable uuid the same way, and ``agentId`` the stable uuid of
a namespace's named agent (the same in every session of it; none for a caller that named no agent)."""

from uuid import UUID, uuid5

# The uuid namespaces of the v5 ids: fixed for good, so an id derived once is derived again.
TENANTS = UUID("6f0f5c8e-3b1d-5b7e-9a43-2d6c1e0a7b11")
RUNS = UUID("0b7d3c2a-8e4f-5a61-b9d0-4c3e2f1a6d22")
THREADS = UUID("a3e1f9b4-2c6d-5e87-8f10-7b9a4d3c5e33")
AGENTS = UUID("5c2e8a61-9d3f-5b04-a7e2-1f6b8c4d9e44")
# The agent of a request that names none: not an agent Loom knows.
UNNAMED_AGENT = "default"


def tenant_id(namespace: str) -> UUID:
    return _as_uuid(namespace, TENANTS)


def interaction_id(namespace: str, thread_id: str, run_id: str | None) -> UUID:
    """The interaction run a turn of ``thread_id`` with ``run_id`` belongs to."""
    if run_id:
        return _as_uuid(run_id, RUNS)
    return uuid5(THREADS, f"{namespace}\n{thread_id}")


def agent_id(namespace: str, agent: str) -> UUID | None:
    """The namespace's agent's id: the same for every session of it; None for an unnamed agent."""
    return None if agent == UNNAMED_AGENT else uuid5(AGENTS, f"{namespace}\n{agent}")


def _as_uuid(value: str, space: UUID) -> UUID:
    try:
        return UUID(value)
    except ValueError:
        return uuid5(space, value)
