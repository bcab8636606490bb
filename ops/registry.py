"""Every op by its document name: the role it needs, its request model, its handler. HTTP and the
CLI both dispatch through ``call``, so both check the same role and validate the same way."""

from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel, ValidationError

from ops import conversation_read, conversation_write, search
from ops.caller import Caller
from ops.errors import OpError, invalid, not_found
from ops.limits import check_body


@dataclass(frozen=True)
class Op:
    role: str
    request: type[BaseModel]
    handler: Callable[[Caller, BaseModel], dict]


OPS: dict[str, Op] = {
    "conversation.set_logging": Op(
        "admin", conversation_write.SetLoggingRequest, conversation_write.set_logging
    ),
    "conversation.append": Op("writer", conversation_write.AppendRequest, conversation_write.append),
    "conversation.create": Op("writer", conversation_write.CreateRequest, conversation_write.create),
    "conversation.update": Op("writer", conversation_write.UpdateRequest, conversation_write.update),
    "conversation.threads": Op("viewer", conversation_read.ThreadsRequest, conversation_read.threads),
    "conversation.get": Op("viewer", conversation_read.GetRequest, conversation_read.get),
    "conversation.list": Op("viewer", conversation_read.ListRequest, conversation_read.list_turns),
    "conversation.search": Op("viewer", search.SearchRequest, search.run),
}


def validation_error(exc: ValidationError) -> OpError:
    first = exc.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or None
    return invalid(f"{field}: {first['msg']}" if field else first["msg"], field)


def call(name: str, caller: Caller, body: object) -> dict:
    op = OPS.get(name)
    if op is None:
        raise not_found(f"unknown op {name!r}")
    caller.require(op.role)
    if not isinstance(body, dict):
        raise invalid("the request body must be a JSON object")
    check_body(body)
    try:
        request = op.request.model_validate(body)
    except ValidationError as exc:
        raise validation_error(exc) from exc
    return op.handler(caller, request)
