"""The LLM the stages ask: ``fake`` (the stock provider: no model, so the stages that need one
refuse or do nothing and say so) or ``openai``, instructor over the openai client against any
OpenAI-compatible endpoint (a hosted model, llama.cpp, Ollama, vLLM).

Every answer is a typed pydantic model. The client retries a refused or failed call (429, 5xx, a
timeout) ``LOOM_LLM_MAX_RETRIES`` times with the openai client's backoff, and instructor asks once
more when an answer does not parse into the model; past that the call raises ``LLMFailed`` and the
stage ledger's backoff takes over. A prompt longer than ``LOOM_LLM_PROMPT_MAX_CHARS`` is refused
before it is sent: the stages build their windows to fit it. Never call a provider inside a
database transaction: a call may take the whole timeout."""

import logging
import threading
from functools import lru_cache
from typing import Protocol, TypeVar

from pydantic import BaseModel

from models.settings import Settings, get_settings

Answer = TypeVar("Answer", bound=BaseModel)


class NoProvider(RuntimeError):
    """The fake provider is configured: there is no model to ask."""


class LLMFailed(RuntimeError):
    """The model could not answer now (endpoint down, timeout, an answer that does not parse)."""


class LLM(Protocol):
    name: str

    def ask(self, answer: type[Answer], instructions: str, prompt: str) -> Answer: ...


NO_PROVIDER = "no LLM provider is configured (LOOM_LLM_PROVIDER=fake)"
NO_PROVIDER_REASON = "no-llm-provider"  # a skipped run's reason, for want of a model


class FakeLLM:
    """The stock provider. It never answers, so nothing it would have written is ever made up."""

    name = "fake"

    def ask(self, answer: type[Answer], instructions: str, prompt: str) -> Answer:
        raise NoProvider(NO_PROVIDER)


class OpenAICompatibleLLM:
    def __init__(self, settings: Settings, base_url: str | None, model: str, api_key: str | None) -> None:
        import instructor
        import openai

        if not base_url:
            raise LLMFailed("LOOM_LLM_BASE_URL is not set")
        self.name = model
        self._prompt_max_chars = settings.llm_prompt_max_chars
        client = openai.OpenAI(
            base_url=base_url,
            api_key=api_key or "unused",
            timeout=settings.llm_timeout_seconds,
            max_retries=settings.llm_max_retries,
        )
        mode = {"tools": instructor.Mode.TOOLS, "json": instructor.Mode.JSON}[settings.llm_mode]
        self._client = instructor.from_openai(client, mode=mode)

    def ask(self, answer: type[Answer], instructions: str, prompt: str) -> Answer:
        if len(instructions) + len(prompt) > self._prompt_max_chars:
            raise ValueError(
                f"prompt of {len(instructions) + len(prompt)} characters is over LOOM_LLM_PROMPT_MAX_CHARS "
                f"({self._prompt_max_chars})"
            )
        try:
            return self._client.chat.completions.create(
                model=self.name,
                response_model=answer,
                max_retries=1,  # one re-ask for an answer that does not parse
                messages=[{"role": "system", "content": instructions}, {"role": "user", "content": prompt}],
            )
        except Exception as exc:  # the openai client's and instructor's errors alike
            raise LLMFailed(f"{type(exc).__name__}: {_first_line(exc)}") from exc


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [""])[0][:500]


_build_lock = threading.Lock()


def get_llm() -> LLM:
    """The configured provider, built once a process."""
    with _build_lock:
        return _build()


def reset_llm() -> None:
    """Forget the built provider (after the settings changed)."""
    with _build_lock:
        _build.cache_clear()
        _build_brief.cache_clear()


def configured() -> bool:
    """Whether a real model is configured (the ops and passes that need one check first)."""
    return get_settings().llm_provider != "fake"


_noted: set[str] = set()


def note_unconfigured(log: logging.Logger, what: str) -> None:
    """Say once a process that ``what`` does nothing for want of a model, not at every firing."""
    if what not in _noted:
        _noted.add(what)
        log.info("%s does nothing: %s", what, NO_PROVIDER)


@lru_cache
def _build() -> LLM:
    settings = get_settings()
    if settings.llm_provider == "openai":
        return OpenAICompatibleLLM(settings, settings.llm_base_url, settings.llm_model, settings.llm_api_key)
    return FakeLLM()


def get_brief_llm() -> LLM:
    """The model that revises session briefs: its own (``LOOM_SESSION_BRIEF_LLM_*``) when its key
    is set, else the deployment's (the fake one when none is configured)."""
    with _build_lock:
        return _build_brief()


@lru_cache
def _build_brief() -> LLM:
    settings = get_settings()
    if settings.session_brief_llm_api_key:
        return OpenAICompatibleLLM(
            settings,
            settings.session_brief_llm_base_url or settings.llm_base_url,
            settings.session_brief_llm_model or settings.llm_model,
            settings.session_brief_llm_api_key,
        )
    return _build()
