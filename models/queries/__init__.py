"""The SQL Loom writes by hand, one module a table family, each statement a named constant with a
comment on why it is written so (procrastinate's ``sql/queries.sql`` is the model). Everything
else goes through the ORM. Nothing above ``models`` writes SQL text: ``pipelines`` and ``workers``
execute these by name, and ``ops`` call pipelines.

A stage run's key has one definition, the SQL function ``loom_run_key(stage, subject_id, version)``
(migration 0030): these statements and ``models.stages.Stage.key`` both call it."""

from sqlalchemy import TextClause, text


def filled(template: str, **parts: str) -> TextClause:
    """The statement of a template of these modules (a constant whose ``{part}`` places are named in
    its comment), each part one of the fixed SQL fragments beside it or a combination of them: never
    a client's text, whose values are bound parameters."""
    return text(template.format(**parts))
