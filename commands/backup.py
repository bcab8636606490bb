"""``loom backup`` and ``loom restore`` (``services.backup``)."""

from pathlib import Path
from typing import Annotated

import typer

import services
from commands.console import fail, out
from models import migrate
from models.settings import get_settings
from services import backup as archives
from services import postgres


def backup(
    to: Annotated[Path, typer.Argument(help="the archive to write (pg_dump's custom format)")],
) -> None:
    """Back up every conversation, memory and token: one consistent archive of the database, taken
    while Loom runs. The data directory's secrets are not in it."""
    if to.is_dir() or not to.parent.is_dir():
        raise fail(f"{to}: name a file in an existing directory")
    with services.running(start=services.DATABASE) as endpoints:
        try:
            archives.dump(endpoints.database_url, to)
        except archives.BackupError as exc:
            raise fail(str(exc), code=1) from None
    out.print(f"backed up to {to} ({to.stat().st_size:,} bytes); restore with: loom restore {to}")


def restore(archive: Annotated[Path, typer.Argument(help="an archive `loom backup` wrote")]) -> None:
    """Restore a backup into this LOOM_HOME's (or LOOM_DATABASE_URL's) database, which must be
    fresh: no Loom data in it. Stop any `loom up` of it first; start it again afterwards."""
    if not archive.is_file():
        raise fail(f"no backup at {archive}")
    with services.running(start=services.DATABASE, create=True) as endpoints:
        # The embedded database is restored by its superuser (the archive makes its extensions),
        # then everything restored is made Loom's role's again.
        embedded = postgres in services.embedded_in_use(endpoints)
        home = get_settings().home
        try:
            archives.restore(postgres.admin_url(home) if embedded else endpoints.database_url, archive)
        except archives.BackupError as exc:
            raise fail(str(exc), code=1) from None
        if embedded:
            postgres.provision(home)
        migrate.upgrade(endpoints.database_url)  # an archive of an older Loom: to this schema
    out.print(f"restored {archive}; start Loom with: loom up")
