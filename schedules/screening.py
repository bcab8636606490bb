"""The screening stage's pass (``rescreen`` by name): a re-screening run for each range of turns
an older rules version judged (of one namespace, or all; at most ``LOOM_RESCREEN_MAX_RUNS`` a pass,
the next pass asks for the rest). A run that succeeded before but whose range holds older turns
again (written by a host still on the old build during an upgrade), or that an older build's
worker skipped, is made pending again."""

from models import db
from models.base import stored
from models.settings import get_settings
from models.stage_run import PENDING
from models.stages import SCREENING
from pipelines import keys, screening
from pipelines.screening import rescreening
from workers import ledger, outbox


def rescreen_outdated(namespace: str | None = None) -> list[int]:
    """Returns the runs sent."""
    settings = get_settings()
    version, span = screening.RULES_VERSION, settings.rescreen_batch
    wanted = {"span": span, "version": version, "namespace": namespace}  # a run's params
    # A namespace's runs are its own (the same range of all namespaces is another run), and so are a
    # span's: a run asked for with another LOOM_RESCREEN_BATCH covers other ids.
    key = f"{version}.{span}" + ("" if namespace is None else f"-{keys.digest(namespace)[:16]}")
    with db.session() as s:
        ranges = rescreening.outdated_ranges(s, span, version, namespace, settings.rescreen_max_runs)
        runs = [ledger.wanted_again(s, SCREENING, k, key, wanted) for k in ranges]
    pending = [stored(run.id) for run in runs if run.status == PENDING]
    if pending:
        outbox.send(SCREENING, pending)
    return pending
