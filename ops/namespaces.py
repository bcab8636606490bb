"""The tenancy as an operator keeps it: ``namespaces.list`` (each namespace's Record switch,
threads and last turn) and ``cursors.rotate_key`` (the key that signs every namespace's paging
cursors).

``namespaces.list`` answers any token, with the namespaces it covers; the registry serves
``cursors.rotate_key`` only to an admin token for every namespace, whose requests name none."""

from pydantic import Field

from ops import cursors
from ops.caller import Caller
from ops.schemas import Answer, Moment, OperatorRequest
from pipelines import namespaces


class NamespacesRequest(OperatorRequest):
    pass


class NamespaceRow(Answer):
    name: str = Field(description="The namespace's name.")
    conversation_logging_enabled: bool = Field(
        description="Its Record switch: whether it keeps conversations (a namespace with no row does not)."
    )
    threads: int = Field(description="How many live conversation threads it holds.")
    last_turn_at: Moment | None = Field(description="When its newest turn was said; null when it has none.")


class NamespacesAnswer(Answer):
    namespaces: list[NamespaceRow] = Field(
        description="The token's namespaces (every one known, for a token of all namespaces)."
    )


def list_namespaces(caller: Caller, req: NamespacesRequest) -> NamespacesAnswer:
    """List the token's namespaces with their Record switch, thread count and last turn.

    Every namespace known, for a token of all namespaces. Takes no `namespace`."""
    return NamespacesAnswer(
        namespaces=[
            NamespaceRow(
                name=one.name,
                conversation_logging_enabled=one.conversation_logging_enabled,
                threads=one.threads,
                last_turn_at=one.last_turn_at,
            )
            for one in namespaces.overview(caller.namespaces)
        ]
    )


class RotateKeyRequest(OperatorRequest):
    pass


class RotateKeyAnswer(Answer):
    key_id: int = Field(description="The new key's id: it signs every paging cursor from now on.")
    accepted_key_ids: list[int] = Field(
        description="The keys whose cursors are accepted: the new one and the one that signed until now."
    )
    retired: int = Field(description="How many keys were dropped: cursors they signed are refused.")


def rotate_cursor_key(caller: Caller, req: RotateKeyRequest) -> RotateKeyAnswer:
    """Sign paging cursors with a new key.

    Cursors issued until now keep paging until the next rotation; those signed before the previous
    one are refused from now on. For an admin of every namespace."""
    rotated = cursors.rotate_key()
    return RotateKeyAnswer(
        key_id=rotated.key_id, accepted_key_ids=rotated.accepted_key_ids, retired=rotated.retired
    )
