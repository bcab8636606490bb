"""stage_runs notify ``loom_run_done`` (payload: the run's id) when a run ends, so a request
waiting on it (``wait: true``, a brief save, a saved message) is woken instead of polling

Revision ID: 0029
"""

from alembic import op

revision = "0029"
down_revision = "0028"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # NOTIFY is sent at commit, once per distinct payload in a transaction: a batch of runs
    # closed together sends one notification a run, none when the transaction rolls back.
    op.execute("""
        CREATE FUNCTION loom_run_done() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_notify('loom_run_done', NEW.id::text);
            RETURN NULL;
        END $$
    """)
    op.execute("""
        CREATE TRIGGER stage_runs_done AFTER UPDATE OF status ON stage_runs
        FOR EACH ROW WHEN (NEW.status IN ('succeeded', 'skipped', 'failed') AND NEW.status <> OLD.status)
        EXECUTE FUNCTION loom_run_done()
    """)


def downgrade() -> None:
    op.execute("DROP TRIGGER stage_runs_done ON stage_runs")
    op.execute("DROP FUNCTION loom_run_done()")
