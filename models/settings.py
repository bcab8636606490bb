"""The one settings object, read from ``LOOM_*`` variables.

Names and defaults follow the product documents (``LOOM_CONVERSATION_SEARCH_MIN_SIMILARITY`` and so
on); fields are flat so each variable keeps exactly the name the documents give it, and grouped here
by area. A setting arrives with the stage that reads it.
"""

import re
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
# A host name, an IPv4 or IPv6 address, or "*.domain": what a request's Host may name.
_HOST_NAME = re.compile(r"(?:\*\.)?[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?|[0-9a-f:]{2,39}", re.IGNORECASE)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="LOOM_", extra="ignore")

    # --- where Loom runs -------------------------------------------------------------------
    home: Path = Field(default=Path("~/.local/share/loom").expanduser(), description="data directory")
    host: str = "127.0.0.1"
    port: int = 7777
    # The names requests may carry in Host besides the loopback ones (comma-separated; "*.domain"
    # for its subdomains): a page of another site whose name resolves here is refused (DNS
    # rebinding). Required when `host` is beyond the loopback (``api.hosts``).
    allowed_hosts: Annotated[list[str], NoDecode] = []
    api_access_log: bool = False  # a log line per request costs the capture path measurable CPU
    # The HTTP server's limits, enforced below the app (``api.server``): a request's line and
    # headers in all (431 beyond), the time to send them (408), connections open at once (503).
    api_max_header_bytes: int = Field(default=64 * 1024, ge=4 * 1024, le=1024 * 1024)
    api_header_timeout_seconds: float = Field(default=10.0, gt=0, le=300)
    api_max_connections: int = Field(default=1000, ge=1, le=100_000)
    # What the console of a Loom process shows (``services.logs``): unset, warnings and a line per
    # process up; the log files under `home`/logs keep INFO and up whatever it is.
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] | None = None
    database_url: str | None = None  # unset: the embedded PostgreSQL under `home`
    redis_url: str | None = None  # unset: the embedded Redis under `home`

    # --- embedding -------------------------------------------------------------------------
    embed_provider: str = "local"  # local | openai
    embed_precision: Literal["int8", "fp32"] = "int8"  # the local model: ONNX Runtime int8 | PyTorch
    embed_base_url: str | None = None
    embed_model: str = "text-embedding-3-small"
    embed_dimensions: int = Field(default=384, ge=1, le=16_000)
    embed_api_key: str | None = None
    embed_batch_size: int = Field(default=64, ge=1, le=4096)
    embed_max_chars: int = Field(default=2048, ge=1)

    # --- the LLM the compaction and titling stages ask (providers/llm.py) --------------------
    llm_provider: Literal["fake", "openai"] = "fake"  # fake: no model; the stages say so and wait
    llm_base_url: str | None = None  # any OpenAI-compatible endpoint
    llm_model: str = "gpt-4o-mini"
    llm_api_key: str | None = None
    llm_mode: Literal["tools", "json"] = "tools"  # how instructor asks for the typed answer
    llm_timeout_seconds: float = Field(default=60.0, gt=0, le=600)
    llm_max_retries: int = Field(default=2, ge=0, le=10)  # of a refused or failed call, with backoff
    llm_prompt_max_chars: int = Field(default=24_000, ge=2_000, le=1_000_000)

    # --- compaction (conversation.compact and the optional auto pass) -------------------------
    compaction_keep_recent: int = Field(default=10, ge=0, le=10_000)  # the auto pass's window
    compaction_min_to_compact: int = Field(default=4, ge=1, le=10_000)
    compaction_auto_turns: int = Field(default=0, ge=0)  # compact transcripts past this many turns; 0 = off
    compaction_auto_max_threads: int = Field(default=20, ge=1, le=10_000)  # per pass
    compaction_auto_interval_seconds: int = Field(default=300, ge=1)

    # --- transcripts handed over whole (conversation.ingest) ---------------------------------
    ingest_max_bytes: int = Field(default=32 * 1024 * 1024, ge=1024, le=1024 * 1024 * 1024)
    ingest_max_turns: int = Field(default=20_000, ge=1, le=1_000_000)

    # --- stage ledger and workers ----------------------------------------------------------
    stage_max_attempts: int = Field(default=3, ge=1)
    stage_min_backoff_ms: int = Field(default=1000, ge=0)
    stage_max_backoff_ms: int = Field(default=60_000, ge=0)
    # Renewed every third of it; a run not renewed belonged to a dead worker. At least 3 s, so a
    # heartbeat is never a busy loop against the database.
    stage_lease_seconds: int = Field(default=20, ge=3)
    sweep_grace_seconds: int = Field(default=60, ge=0)  # a `pending` run older than this is re-sent
    sweep_interval_seconds: int = Field(default=10, ge=1)
    worker_threads: int = Field(default=2, ge=1)
    # A stopping worker lets its runs in flight finish for this long, then hands the rest back
    # (pending, the attempt not spent). Under the 30 s `loom up` waits for its children.
    worker_stop_grace_seconds: int = Field(default=10, ge=0, le=25)
    reembed_interval_seconds: int = Field(default=60, ge=1)  # how often the re-embedding pass runs
    reembed_batch: int = Field(default=1000, ge=1)  # turns it sends for re-embedding per pass
    # Re-screening (turns an older rules version judged): how often the pass looks, the span of
    # turn ids one run judges in one transaction, and the most runs a pass asks for.
    rescreen_interval_seconds: int = Field(default=3600, ge=1)
    rescreen_batch: int = Field(default=500, ge=1, le=100_000)
    rescreen_max_runs: int = Field(default=100, ge=1, le=100_000)
    # Retention and tiering of transcripts (turns, by month): days after which turns expire (0:
    # never), days after which a month moves to the warm tablespace (0: never; needs the
    # tablespace, made by the operator with CREATE TABLESPACE), how often the pass looks, and the
    # rows one transaction of a trim or a key clean-up removes.
    retention_conversations_days: int = Field(default=0, ge=0, le=36_500)
    tiering_conversations_warm_days: int = Field(default=0, ge=0, le=36_500)
    warm_tablespace: str | None = Field(default=None, min_length=1, max_length=63)
    retention_interval_seconds: int = Field(default=3600, ge=1)
    retention_batch: int = Field(default=5000, ge=1, le=1_000_000)
    erasure_batch: int = Field(default=1000, ge=1, le=1_000_000)  # rows one erasure transaction changes

    # --- operators ---------------------------------------------------------------------------
    metrics_cache_seconds: float = Field(default=1.0, ge=0)  # scrapes within this share a snapshot
    # A dashboard sign-in lasts this long (its token's revocation ends it sooner).
    ui_session_hours: float = Field(default=12, gt=0, le=24 * 30)
    # Mark the sign-in cookie Secure even when the request came as plain HTTP (behind a proxy that
    # ends TLS); over HTTPS it always is.
    ui_cookie_secure: bool = False

    # --- conversations ---------------------------------------------------------------------
    conversation_search_min_similarity: float = Field(default=0.30, ge=-1, le=1)
    conversation_search_excerpt_chars: int = Field(default=240, ge=0)
    # The candidates the vector leg's HNSW walk keeps (hnsw.ef_search), whatever the page asked (an
    # iterative scan walks on when a page wants more); more reach more of the exact nearest at more
    # cost. 250: at 1,000,000 turns, on the half-precision m 32 index (migration 0041), the semantic
    # mode's recall@10 against an exact scan is 0.966 there, 0.950-0.957 at 200, 0.93 at 100
    # (bench/search_scale.py, bench/README.md).
    conversation_search_ef_search: int = Field(default=250, ge=1, le=1000)
    # conversation.save_message waits this long for the embedding stage to index the message, then
    # answers indexed: false, reason: "pending" (the worker finishes it later).
    save_message_wait_seconds: float = Field(default=10.0, ge=0, le=60)
    conversation_titler_enabled: bool = True  # does nothing without an LLM provider
    conversation_titler_interval_seconds: int = Field(default=300, ge=1)
    conversation_titler_window_hours: int = Field(default=168, ge=1, le=87_600)  # threads active within
    conversation_titler_min_turns: int = Field(default=4, ge=1)
    conversation_titler_max_threads_per_pass: int = Field(default=10, ge=1, le=10_000)

    # --- memory (looms, memory threads, sessions) -----------------------------------------------
    # A session's tapestry (what its agent wakes up knowing) holds at most this many tokens
    # (pipelines.token_budget's count), unless its first context.pack names its own budget; and
    # what one memory.suggest offers, this many.
    tapestry_max_tokens: int = Field(default=1_000, ge=50, le=8_000)
    suggest_max_tokens: int = Field(default=400, ge=20, le=4_000)
    # memory.suggest offers a thread only when it is at least this similar to what was said (a
    # thread without a vector yet: when it shares a word); the rest are held back.
    memory_suggest_min_similarity: float = Field(default=0.30, ge=-1, le=1)
    # Night weaving: when the nightly pass fires (a cron expression, the scheduler's time zone is
    # UTC), and the most turns of a session one night reads (the rest wait for the next nights).
    night_weaving_cron: str = "0 3 * * *"
    night_weaving_max_turns: int = Field(default=200, ge=1, le=10_000)

    # --- session briefs ------------------------------------------------------------------------
    # Events are condensed by the model (its own endpoint when its key is set, else the
    # deployment's LLM); off: by the deterministic builder. Each window of events is one
    # brief_window run, at most max_windows a save (the newest). model_calls off (the operator's
    # switch) stops both: saves of events alone then revise nothing.
    session_brief_llm: bool = True
    session_brief_llm_model: str | None = Field(default=None, min_length=1, max_length=256)
    session_brief_llm_base_url: str | None = None
    session_brief_llm_api_key: str | None = None
    session_brief_window_chars: int = Field(default=8_000, ge=500, le=200_000)
    session_brief_max_windows: int = Field(default=8, ge=1, le=100)
    session_brief_model_calls: bool = True

    # --- MCP ----------------------------------------------------------------------------------
    # An MCP session's implicit run (the run its appends carry) closes after this long without a
    # call; the session's next call starts a new one.
    mcp_session_run_idle_seconds: float = Field(default=1_800, gt=0, le=7 * 86_400)

    @field_validator("allowed_hosts", mode="before")
    @classmethod
    def _host_names(cls, value: str | list[str]) -> list[str]:
        names = [name.strip().lower() for name in value.split(",")] if isinstance(value, str) else value
        names = [name for name in names if name]
        bad = [name for name in names if not _HOST_NAME.fullmatch(name)]
        if bad:
            raise ValueError(
                f"not a host name: {bad[0][:80]!r} (names like loom.internal, 10.0.0.5, *.example.com)"
            )
        return names

    @field_validator("log_level", mode="before")
    @classmethod
    def _level_name(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value

    @field_validator("night_weaving_cron")
    @classmethod
    def _a_crontab(cls, value: str) -> str:
        # Imported here: the validator runs only when the variable is set, and `loom search` never.
        from models import crontab

        crontab.trigger(value)  # a ValueError names what is wrong
        return value

    @property
    def operator_key_file(self) -> Path:
        """The operator key (``services.keys``): the API takes it as the operator's bearer token."""
        return self.home / "operator.key"

    @property
    def local_api_url(self) -> str:
        """Where a command on this host reaches the API ``loom up`` serves (a wildcard bind is
        reached on the loopback)."""
        host = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}.get(self.host, self.host)
        return f"http://[{host}]:{self.port}" if ":" in host else f"http://{host}:{self.port}"


@lru_cache
def get_settings() -> Settings:
    return Settings()


def refused() -> str | None:
    """What is wrong with this environment's ``LOOM_`` settings, in one line (the first mistake);
    None when they are all right. (Only values of bounded fields can be wrong: none holds a secret.)"""
    try:
        get_settings()
    except ValidationError as exc:
        mistake = exc.errors()[0]
        name = f"LOOM_{'_'.join(map(str, mistake['loc'])).upper()}"
        return f"{name}: {mistake['msg']} (it is {str(mistake['input'])[:80]!r})"
    return None
