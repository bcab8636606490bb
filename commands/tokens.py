"""``loom tokens``: mint, list and revoke bearer tokens (``ops.caller``, on the database alone)."""

import json
from typing import Annotated, Any

import typer

import services
from commands.common import call
from commands.console import Column, err, fail, out, say, table
from models import db
from models.settings import get_settings
from ops.caller import create_token, list_tokens, revoke_token
from ops.errors import OpError
from pipelines import recording

tokens_app = typer.Typer(no_args_is_help=True, help="Bearer tokens.")

# On a narrow terminal the creation time goes first, then the narrowing of what a token reads.
TOKEN_COLUMNS = (
    Column("id"),
    Column("role"),
    Column("namespaces", wraps=True),
    Column("read scope", drop=3),
    Column("pinned to", wraps=True, drop=2, none=""),
    Column("user", none="", drop=4),
    Column("created", time=True, drop=1),
    Column("revoked", time=True, none=""),
)


def records(namespace: str) -> bool:
    with db.session() as s:
        return recording.recording(s, namespace)


@tokens_app.command("create")
def tokens_create(
    namespace: Annotated[
        list[str] | None, typer.Option("--namespace", help="a namespace the token covers; repeat")
    ] = None,
    role: Annotated[str, typer.Option(help="viewer | writer | admin")] = "writer",
    read_scope: Annotated[
        str,
        typer.Option(help="namespace (a service token) | own_user (an end user's) | own_session"),
    ] = "namespace",
    read_user_id: Annotated[
        str | None,
        typer.Option(help="own_user: the one user the token acts as (else each request names one)"),
    ] = None,
    read_session_id: Annotated[
        str | None, typer.Option(help="own_session: the session it is pinned to")
    ] = None,
    user_id: Annotated[
        str | None,
        typer.Option(
            help="the user the token speaks for: it owns the coding-session threads the token writes "
            "(bounds no read; without it a namespace-wide token owns as the namespace)"
        ),
    ] = None,
    all_namespaces: Annotated[
        bool,
        typer.Option(
            "--all-namespaces",
            help="every namespace, present and future: the operator's token (operator ops, dashboard)",
        ),
    ] = False,
    recording: Annotated[
        bool,
        typer.Option(
            "--recording", help="also switch conversation recording on in its namespaces (off by default)"
        ),
    ] = False,
) -> None:
    """Mint a bearer token; prints only the token (and on stderr whether its namespaces record)."""
    names = namespace or []
    if recording and not names:
        raise fail(
            "--recording needs the namespaces by name (--namespace NS): recording is switched per namespace"
        )
    with services.running(start=services.DATABASE) as endpoints:
        try:
            token = create_token(
                names, role, read_scope, read_user_id, read_session_id, user_id, all_namespaces
            )
        except OpError as exc:
            raise fail(exc.reason) from exc
        if recording:
            for name in names:
                call("conversation.set_logging", {"namespace": name, "enabled": True})
        said = {name: records(name) for name in names}
    print(token)
    if endpoints.started_here:
        say(
            f"Loom is not running from {get_settings().home}: the token is stored there and works once "
            "`loom up` serves this data directory",
            to=err,
        )
    for name, on in said.items():
        if on:
            say(f"{name} records conversations", to=err)
        else:
            say(
                f"{name} does not record conversations (off by default): turn it on with "
                f"`loom namespaces logging {name} --on`, or mint with --recording",
                to=err,
            )


@tokens_app.command("list")
def tokens_list(
    as_json: Annotated[bool, typer.Option("--json", help="one JSON object per line")] = False,
) -> None:
    """Every token minted, revoked ones too (never the token itself: only its hash is kept)."""
    with services.running(start=services.DATABASE):
        tokens = list_tokens()
    rows: list[dict[str, Any]] = [
        {
            "id": t.id,
            "role": t.role,
            "namespaces": t.namespaces,
            "all_namespaces": t.all_namespaces,
            "read_scope": t.read_scope,
            "read_user_id": t.read_user_id,
            "read_session_id": t.read_session_id,
            "user_id": t.user_id,
            "created_at": t.created_at.isoformat(),
            "revoked_at": t.revoked_at.isoformat() if t.revoked_at else None,
        }
        for t in tokens
    ]
    if as_json:
        for row in rows:
            print(json.dumps(row))
        return
    shown = (
        (
            row["id"],
            row["role"],
            "(all)" if row["all_namespaces"] else ", ".join(row["namespaces"]),
            row["read_scope"],
            row["read_user_id"] or row["read_session_id"],
            row["user_id"],
            row["created_at"],
            row["revoked_at"],
        )
        for row in rows
    )
    out.print(table(TOKEN_COLUMNS, shown))


@tokens_app.command("revoke")
def tokens_revoke(token_id: Annotated[int, typer.Argument(help="the id `loom tokens list` shows")]) -> None:
    """Revoke a token: it is refused (401) within the grant cache's lifetime (10 s)."""
    with services.running(start=services.DATABASE):
        if not revoke_token(token_id):
            raise fail(f"no live token with id {token_id}")
    print(f"revoked token {token_id}")
