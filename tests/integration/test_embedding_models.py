"""One vector space at a time: search compares the query only with vectors of its own model, a
change of model is brought over by the re-embedding pass, and a model of another width is refused
at start."""

from sqlmodel import select
from typer.testing import CliRunner

from models import db
from models.conversation import Embedding
from models.settings import get_settings
from ops.caller import OPERATOR
from ops.registry import call
from providers import embedders
from schedules.reembedding import reembed_outdated
from tests.support.calls import append, enable_logging
from tests.support.waits import settled, wait_until

TEXTS = (
    "The invoices moved to the new ledger in March.",
    "Our export job reads the ledger every night.",
    "The cat sleeps on the warm windowsill.",
)


def search(query: str) -> dict:
    body = {"namespace": "models", "query": query, "limit": 10, "search_mode": "semantic"}
    return call("conversation.search", OPERATOR, body)


def models_of_rows() -> set[str]:
    with db.session() as s:
        return set(s.exec(select(Embedding.model).where(Embedding.namespace == "models")))


def use_local_model(monkeypatch) -> None:
    monkeypatch.setenv("LOOM_EMBED_PROVIDER", "local")
    get_settings.cache_clear()
    embedders.reset_embedder()


def test_a_model_change_hides_old_vectors_from_search_until_the_pass_reembeds_them(
    worker, openai_embedder, monkeypatch
):
    enable_logging("models")
    for text in TEXTS:
        append("models", "t", text)
    wait_until(settled, what="embedding with the remote model")
    assert models_of_rows() == {get_settings().embed_model}
    remote = search("invoices ledger")
    assert remote["mode"] == "vector" and remote["hits"]  # the remote model finds its own vectors

    use_local_model(monkeypatch)
    monkeypatch.setenv("LOOM_CONVERSATION_SEARCH_MIN_SIMILARITY", "-1")  # no floor hides anything
    get_settings.cache_clear()
    local = search("where did the invoices go?")
    assert local["mode"] == "vector" and local["hits"] == []  # another model's space: not compared

    assert len(reembed_outdated(limit=2)) == 2  # bounded: two of the three this pass
    assert len(reembed_outdated(limit=10)) == 1  # the third; the two are pending, not picked twice
    wait_until(settled, timeout=120, what="re-embedding with the local model")
    assert models_of_rows() == {"all-MiniLM-L6-v2"}
    assert reembed_outdated(limit=10) == []  # nothing left: the pass is idempotent
    hits = search("where did the invoices go?")["hits"]
    assert hits and hits[0]["excerpt"] == TEXTS[0]


def test_memory_threads_are_brought_over_by_the_same_pass(worker, openai_embedder, monkeypatch):
    def memory_search(query: str) -> list[str]:
        body = {"namespace": "models-memory", "query": query, "search_mode": "semantic"}
        return [hit["content"] for hit in call("memory.search", OPERATOR, body)["hits"]]

    for text in TEXTS:
        call("memory.set", OPERATOR, {"namespace": "models-memory", "content": text})
    wait_until(settled, what="the memory threads' embedding with the remote model")
    use_local_model(monkeypatch)
    monkeypatch.setenv("LOOM_CONVERSATION_SEARCH_MIN_SIMILARITY", "-1")
    get_settings.cache_clear()
    assert memory_search("where did the invoices go?") == []  # another model's space: not compared

    assert len(reembed_outdated(limit=10)) == 3
    wait_until(settled, timeout=120, what="re-embedding the memory threads with the local model")
    assert reembed_outdated(limit=10) == []
    assert memory_search("where did the invoices go?")[0] == TEXTS[0]


def test_a_model_of_another_width_is_refused_at_start(monkeypatch, logging_restored):
    import uvicorn

    import cli
    from schedules import runner as schedules_runner
    from workers import runner

    def started(*args, **kwargs):
        raise AssertionError("started despite the width")  # fail, rather than serve until the timeout

    for module in (runner, schedules_runner, uvicorn):
        monkeypatch.setattr(module, "run", started)
    monkeypatch.setenv("LOOM_EMBED_PROVIDER", "openai")
    monkeypatch.setenv("LOOM_EMBED_DIMENSIONS", "1536")
    get_settings.cache_clear()
    try:
        for command in ("worker", "api", "scheduler"):
            result = CliRunner().invoke(cli.app, [command])
            assert result.exit_code == 2, (command, result.output)
            (line,) = result.stderr.strip().splitlines()
            assert "384-dimension" in line and "1536" in line
    finally:
        monkeypatch.undo()
        get_settings.cache_clear()
