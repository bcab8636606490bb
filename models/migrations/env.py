"""Alembic environment: the URL comes from the caller (``models.migrate``), never from a file."""

from alembic import context
from sqlalchemy import create_engine
from sqlmodel import SQLModel

import models.tables  # noqa: F401  registers every table on the metadata

config = context.config
engine = create_engine(config.get_main_option("sqlalchemy.url"))
with engine.connect() as connection:
    context.configure(connection=connection, target_metadata=SQLModel.metadata)
    with context.begin_transaction():
        context.run_migrations()
engine.dispose()
