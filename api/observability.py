"""``GET /metrics`` (Prometheus text) and ``GET /healthz`` (status to anyone, each check's detail
to an admin token), over ``ops.status``.

Each app keeps a registry of its own (not prometheus_client's global one), built on its first
request, holding the collector over ``ops.status.Probe.snapshot`` and the process's append
metrics (``ops.append_metrics``).
"""

import dataclasses
import threading
from collections.abc import Iterator

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector

from ops import status
from ops.activity import SEARCHES
from ops.append_metrics import APPEND_SECONDS, APPENDS
from ops.caller import NAMESPACE_WIDE, authenticate

router = APIRouter()

# --- the snapshot as metrics ---------------------------------------------------------------------


class SnapshotCollector(Collector):
    """Takes the probe's recent snapshot at every scrape. A server that is down gives its ``_up``
    0 and no series for what only it could tell (a stage's runs, a queue's depth): unknown, not
    zero."""

    def __init__(self, probe: status.Probe) -> None:
        self.probe = probe

    def describe(self) -> list[Metric]:
        return []  # nothing to check at registration (which would otherwise take a snapshot)

    def collect(self) -> Iterator[Metric]:
        snap = self.probe.recent_snapshot()
        for name, check in (("database", snap.database), ("broker", snap.broker)):
            yield GaugeMetricFamily(f"loom_{name}_up", f"1 when the {name} answers", value=int(check.ok))
        runs = GaugeMetricFamily("loom_stage_runs", "Stage runs in the ledger", labels=["stage", "status"])
        oldest = GaugeMetricFamily(
            "loom_stage_oldest_pending_age_seconds",
            "How long the oldest pending run of the stage has been claimable (0: none)",
            labels=["stage"],
        )
        depth = GaugeMetricFamily(
            "loom_queue_depth",
            "Messages in the stage's Dramatiq queue: ready, delayed (retry backoff), dead (given up)",
            labels=["queue", "state"],
        )
        for stage, state in snap.stages.items():
            if state.runs is not None:
                for run_status, n in state.runs.items():
                    runs.add_metric([stage, run_status], n)
                oldest.add_metric([stage], state.oldest_pending_seconds or 0)
            if state.queued is not None:
                for queue_state, n in state.queued.items():
                    depth.add_metric([state.queue, queue_state], n)
        yield from (runs, oldest, depth)
        throughput = GaugeMetricFamily(
            "loom_embedder_turns_per_second",
            "Turns embedded per second over the window",
            labels=["window"],
        )
        for window, rate in (snap.embedded_per_second or {}).items():
            throughput.add_metric([window], rate)
        yield throughput
        yield GaugeMetricFamily(
            "loom_status_snapshot_seconds", "How long reading these figures took", value=snap.seconds
        )


# --- per app -------------------------------------------------------------------------------------


@dataclasses.dataclass
class Observability:
    probe: status.Probe
    registry: CollectorRegistry


_lock = threading.Lock()


def observability(app: FastAPI) -> Observability:
    """The app's probe and registry, built on first use (when the app's endpoints are known)."""
    found = getattr(app.state, "observability", None)
    if found is None:
        with _lock:
            found = getattr(app.state, "observability", None)
            if found is None:
                probe = status.Probe()
                metrics = CollectorRegistry()
                for collector in (APPENDS, APPEND_SECONDS, SEARCHES, SnapshotCollector(probe)):
                    metrics.register(collector)
                found = app.state.observability = Observability(probe, metrics)
    return found


@router.get("/metrics")
def metrics(request: Request) -> Response:
    """The Prometheus metrics: the servers, each stage's runs and queue, and this process's appends
    (text format, or OpenMetrics when the scraper asks for it); no token."""
    encode, content_type = choose_encoder(request.headers.get("accept", ""))
    return Response(encode(observability(request.app).registry), media_type=content_type)


@router.get("/healthz")
def healthz(request: Request) -> JSONResponse:
    """200 ``{"status": "ok"}`` when the database and the broker answer, else 503 ``degraded``.
    Only an admin token also gets each check, with its error (which names hosts and ports)."""
    probe = observability(request.app).probe
    checks = probe.checks()
    healthy = all(check.ok for check in checks.values())
    answer = {"status": "ok" if healthy else "degraded"}
    # Tokens live in the database: with it down, nobody can be told more than the status.
    if checks["database"].ok and _is_admin(request.headers.get("authorization"), probe.timeout):
        answer |= {name: check.label for name, check in checks.items()}
    return JSONResponse(answer, status_code=200 if healthy else 503)


def _is_admin(authorization: str | None, timeout: float) -> bool:
    if not authorization:
        return False
    caller = status.bounded({"caller": lambda: authenticate(authorization)}, timeout)["caller"]
    # An admin token bounded to one end user or session is that user's, not an operator's.
    return (
        not isinstance(caller, BaseException)
        and caller.role == "admin"
        and caller.read_scope == NAMESPACE_WIDE
    )
