"""Schema changes are Alembic migrations under ``models/migrations``; this runs them."""

from pathlib import Path

from alembic import command
from alembic.config import Config


def _config(database_url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
    config.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    return config


def upgrade(database_url: str, revision: str = "head") -> None:
    command.upgrade(_config(database_url), revision)


def revision(database_url: str, message: str) -> None:
    """Autogenerate a migration from the tables (a developer's tool: review what it writes)."""
    command.revision(_config(database_url), message=message, autogenerate=True)
