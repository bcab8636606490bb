"""The ids the memory plane derives from the conversation plane's names, each by one function.

A LoomSession's ``interactionProcessId`` is the conversation's ``run_id`` when that is a uuid, and
a stable uuid (v5) of it when it is not; a turn with no run belongs to the interaction of its
thread. ``tenantId`` is the namespace's stable uuid the same way."""

from uuid import UUID, uuid5

# The uuid namespaces of the v5 ids: fixed for good, so an id derived once is derived again.
TENANTS = UUID("6f0f5c8e-3b1d-5b7e-9a43-2d6c1e0a7b11")
RUNS = UUID("0b7d3c2a-8e4f-5a61-b9d0-4c3e2f1a6d22")
THREADS = UUID("a3e1f9b4-2c6d-5e87-8f10-7b9a4d3c5e33")


def tenant_id(namespace: str) -> UUID:
    return _as_uuid(namespace, TENANTS)


def interaction_id(namespace: str, thread_id: str, run_id: str | None) -> UUID:
    """The interaction run a turn of ``thread_id`` with ``run_id`` belongs to."""
    if run_id:
        return _as_uuid(run_id, RUNS)
    return uuid5(THREADS, f"{namespace}\n{thread_id}")


def _as_uuid(value: str, space: UUID) -> UUID:
    try:
        return UUID(value)
    except ValueError:
        return uuid5(space, value)
