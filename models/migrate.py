"""Schema changes are Alembic migrations under ``models/migrations``; this runs them.

Alembic is imported when a migration runs, not with this module: every command imports it through
``services`` and most never migrate (importing Alembic costs a one-off command ~0.3 s)."""

from pathlib import Path


def _config(database_url: str):
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
    config.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    return config


def upgrade(database_url: str, revision: str = "head") -> None:
    from alembic import command

    command.upgrade(_config(database_url), revision)


def revision(database_url: str, message: str) -> None:
    """Autogenerate a migration from the tables (a developer's tool: review what it writes)."""
    from alembic import command

    command.revision(_config(database_url), message=message, autogenerate=True)
