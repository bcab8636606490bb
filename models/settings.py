"""The one settings object, read from ``LOOM_*`` variables.

Names and defaults follow the product documents (``LOOM_CONVERSATION_SEARCH_MIN_SIMILARITY`` and so
on); fields are flat so each variable keeps exactly the name the documents give it, and grouped here
by area.
"""

from functools import lru_cache
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="LOOM_", extra="ignore")

    # --- where Loom runs -------------------------------------------------------------------
    home: Path = Field(default=Path("~/.local/share/loom").expanduser(), description="data directory")
    host: str = "127.0.0.1"
    port: int = 7777
    database_url: str | None = None  # unset: the embedded PostgreSQL under `home`
    redis_url: str | None = None  # unset: the embedded Redis under `home`

    # --- embedding -------------------------------------------------------------------------
    embed_provider: str = "local"  # local | openai
    embed_base_url: str | None = None
    embed_model: str = "text-embedding-3-small"
    embed_dimensions: int = 384
    embed_api_key: str | None = None
    embed_batch_size: int = 64
    embed_max_chars: int = 2048

    # --- LLM -------------------------------------------------------------------------------
    llm_provider: str = "fake"  # fake | openai
    llm_base_url: str | None = None
    llm_model: str = "gpt-4o-mini"
    llm_api_key: str | None = None

    # --- stage ledger and workers ----------------------------------------------------------
    stage_max_attempts: int = 3
    stage_min_backoff_ms: int = 1000
    stage_max_backoff_ms: int = 60_000
    stage_lease_seconds: int = 300  # a `running` run older than this belonged to a dead worker
    sweep_grace_seconds: int = 60  # a `pending` run older than this is re-sent by the sweep
    sweep_interval_seconds: int = 30
    worker_threads: int = 2

    # --- conversations ---------------------------------------------------------------------
    conversation_search_min_similarity: float = 0.30
    conversation_search_excerpt_chars: int = 240
    conversation_titler_enabled: bool = True
    conversation_titler_interval_minutes: int = 15
    conversation_titler_window_hours: int = 168
    conversation_titler_min_turns: int = 4
    conversation_titler_max_threads_per_pass: int = 10
    retention_conversations_days: int = 0  # 0 = keep forever

    # --- session briefs --------------------------------------------------------------------
    session_brief_llm: bool = True
    session_brief_llm_model: str | None = None
    session_brief_window_chars: int = 24_000
    session_brief_max_windows: int = 4


@lru_cache
def get_settings() -> Settings:
    return Settings()
