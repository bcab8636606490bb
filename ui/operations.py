"""The operator's pages: the stage ledger's runs (retry one), the passes (run one), the night
weavings and health."""

from fastapi import Request
from fastapi.responses import HTMLResponse, Response

from ui.routing import Acting, Name, Who, back, call, page, ui_router

router = ui_router()


@router.get("/runs")
def runs(
    request: Request, who: Who, stage: str = "", status: str = "", before_id: int | None = None
) -> HTMLResponse:
    answer = call(who, "runs.list", stage=stage or None, status=status or None, before_id=before_id, limit=50)
    passes = call(who, "passes.list")["passes"]
    filters = {"stage": stage, "status": status}
    return page(request, who, "runs.html", answer=answer, passes=passes, filters=filters)


@router.get("/runs/{run_id}")
def run(request: Request, run_id: int, who: Who) -> HTMLResponse:
    return page(request, who, "run.html", run=call(who, "runs.get", run_id=run_id)["run"])


@router.post("/runs/{run_id}/retry")
def retry(run_id: int, who: Acting) -> Response:
    return back(who, f"/ui/runs/{run_id}", call(who, "runs.retry", run_id=run_id)["message"])


@router.post("/passes/run")
def run_pass(who: Acting, name: Name) -> Response:
    answer = call(who, "passes.run", name=name)
    return back(who, "/ui/runs", f"{name}: sent {answer['sent']} runs")


# --- night weaving -------------------------------------------------------------------------------


@router.get("/nights")
def nights(request: Request, who: Who) -> HTMLResponse:
    return page(request, who, "nights.html", nights=call(who, "night_weaving.list", limit=30)["nights"])


# --- health --------------------------------------------------------------------------------------


@router.get("/health")
def health(request: Request, who: Who) -> HTMLResponse:
    return page(request, who, "health.html", health=call(who, "health.get"))
