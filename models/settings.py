"""The one settings object, read from ``LOOM_*`` variables.

Names and defaults follow the product documents (``LOOM_CONVERSATION_SEARCH_MIN_SIMILARITY`` and so
on); fields are flat so each variable keeps exactly the name the documents give it, and grouped here
by area. A setting arrives with the stage that reads it.
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
    api_access_log: bool = False  # a log line per request costs the capture path measurable CPU
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

    # --- stage ledger and workers ----------------------------------------------------------
    stage_max_attempts: int = 3
    stage_min_backoff_ms: int = 1000
    stage_max_backoff_ms: int = 60_000
    stage_lease_seconds: int = 20  # renewed every third of it; one not renewed belonged to a dead worker
    sweep_grace_seconds: int = 60  # a `pending` run older than this is re-sent by the sweep
    sweep_interval_seconds: int = 10
    worker_threads: int = 2
    reembed_interval_seconds: int = 60  # how often the re-embedding pass looks for another model's vectors
    reembed_batch: int = 1000  # turns it sends for re-embedding per pass

    # --- conversations ---------------------------------------------------------------------
    conversation_search_min_similarity: float = 0.30
    conversation_search_excerpt_chars: int = 240


@lru_cache
def get_settings() -> Settings:
    return Settings()
