"""The stage ledger (the ``stage_runs`` table), one module a concern: ``requests`` (asking for a
run, asking again, an operator's retry), ``claims`` (claim, lease, finish, release with backoff),
``sweep`` (runs nobody works on) and ``reads``. Every statement that may touch many runs works in
bounded batches."""

from workers.ledger.chosen import BATCH
from workers.ledger.claims import (
    add_to_result,
    backoff,
    claim,
    extend,
    finish,
    hand_back,
    leased,
    release,
    show_progress,
    start_claiming,
    stop_claiming,
)
from workers.ledger.reads import get, runs_by_id, select_runs
from workers.ledger.requests import RetryOutcome, request, retry, retry_all, revive, wanted_again
from workers.ledger.sweep import fail_abandoned, stale

__all__ = [
    "BATCH",
    "RetryOutcome",
    "add_to_result",
    "backoff",
    "claim",
    "extend",
    "fail_abandoned",
    "finish",
    "get",
    "hand_back",
    "leased",
    "release",
    "request",
    "retry",
    "retry_all",
    "revive",
    "runs_by_id",
    "select_runs",
    "show_progress",
    "stale",
    "start_claiming",
    "stop_claiming",
    "wanted_again",
]
