"""``loom db``: the schema's migrations, on the configured database (an embedded one is started
for the command's own time)."""

from typing import Annotated

import typer

import services
from commands.console import out
from models import migrate

db_app = typer.Typer(no_args_is_help=True, help="Schema migrations.")


@db_app.command("upgrade")
def db_upgrade() -> None:
    """Apply the migrations to the configured database (an embedded one is made where none is)."""
    with services.running(start=services.DATABASE, create=True) as endpoints:
        migrate.upgrade(endpoints.database_url)
    out.print("database at the newest schema")


@db_app.command("revision")
def db_revision(
    message: Annotated[str, typer.Option("-m", "--message", help="what the migration does")],
) -> None:
    """Autogenerate a migration from the tables (review what it writes before committing it)."""
    with services.running(start=services.DATABASE) as endpoints:
        migrate.revision(endpoints.database_url, message)
