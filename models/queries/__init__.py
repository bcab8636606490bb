"""The SQL Loom writes by hand, one module a table family, each statement a named constant with a
comment on why it is written so (procrastinate's ``sql/queries.sql`` is the model). Everything
else goes through the ORM. Nothing above ``models`` writes SQL text: ``pipelines`` and ``workers``
execute these by name, and ``ops`` call pipelines.

A stage run's key has one definition, the SQL function ``loom_run_key(stage, subject_id, version)``
(migration 0030): these statements and ``models.stages.Stage.key`` both call it. A statement that
finds a stage's runs spells the stage as its declaration does (``runs_of``)."""

from sqlalchemy import TextClause, text

from models.stages import Stage


def filled(template: str, **parts: str) -> TextClause:
    """The statement of a template of these modules (a constant whose ``{part}`` places are named in
    its comment), each part one of the fixed SQL fragments beside it or a combination of them: never
    a client's text, whose values are bound parameters."""
    return text(template.format(**parts))


def runs_of(stage: Stage, subject_id: str, run: str = "r") -> str:
    """The condition that the ``stage_runs`` row ``run`` is a run of ``stage`` on the subject whose
    id is the SQL expression ``subject_id``: the declaration's name and subject prefix, written in
    as literals (they are the code's, never a client's), so each statement is planned as before."""
    return f"{run}.stage = '{stage.name}' AND {run}.subject = '{stage.subject_prefix}' || {subject_id}"
