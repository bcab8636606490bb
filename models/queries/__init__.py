"""The SQL Loom writes by hand, one module a table family, each statement a named constant with a
comment on why it is written so (procrastinate's ``sql/queries.sql`` is the model). Everything
else goes through the ORM. Nothing above ``models`` writes SQL text: ``pipelines`` and ``workers``
execute these by name, and ``ops`` call pipelines.

A stage run's key has one definition, the SQL function ``loom_run_key(stage, subject_id, version)``
(migration 0030): these statements and ``workers.stages.Stage.key`` both call it."""
