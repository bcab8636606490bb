"""The LLM provider against the local OpenAI-compatible server: typed answers in both of
instructor's modes, bounded retries of refused and failed calls, a timeout, unparseable answers,
the prompt cap, and the stock fake provider that never answers."""

import time

import pytest
from pydantic import BaseModel

from models.settings import get_settings
from providers import llm as providers_llm
from providers.llm import LLMFailed, NoProvider, get_llm


class Title(BaseModel):
    title: str


ASK = ("Give the conversation a short title.", "user: how do I rotate the staging database password")


def test_the_stock_provider_never_answers_and_says_why():
    providers_llm.reset_llm()
    assert get_settings().llm_provider == "fake" and not providers_llm.configured()
    with pytest.raises(NoProvider, match="LOOM_LLM_PROVIDER=fake"):
        get_llm().ask(Title, *ASK)


def test_a_tool_call_answer_parses_into_the_typed_model(llm):
    answer = get_llm().ask(Title, *ASK)
    assert isinstance(answer, Title) and answer.title == "user how rotate the staging"
    [messages] = llm.chat_calls
    assert [m["role"] for m in messages] == ["system", "user"] and messages[1]["content"] == ASK[1]


def test_json_mode_answers_parse_too(llm, monkeypatch):
    monkeypatch.setenv("LOOM_LLM_MODE", "json")
    get_settings.cache_clear()
    providers_llm.reset_llm()
    assert get_llm().ask(Title, *ASK).title == "user how rotate the staging"


def test_a_failed_call_is_retried_within_the_bound(llm):
    llm.fail_next(1, 500)
    assert get_llm().ask(Title, *ASK).title
    assert len(llm.chat_calls) == 2


@pytest.mark.parametrize("mode", ["fail", "rate_limited"])
def test_a_model_that_keeps_failing_raises_after_the_bounded_retries(llm, mode):
    llm.mode = mode
    with pytest.raises(LLMFailed):
        get_llm().ask(Title, *ASK)
    assert len(llm.chat_calls) == 1 + get_settings().llm_max_retries


def test_a_stalled_model_times_out(llm, monkeypatch):
    monkeypatch.setenv("LOOM_LLM_MAX_RETRIES", "0")
    get_settings.cache_clear()
    providers_llm.reset_llm()
    llm.mode = "stall"
    started = time.monotonic()
    with pytest.raises(LLMFailed, match="timed out"):
        get_llm().ask(Title, *ASK)
    assert time.monotonic() - started < get_settings().llm_timeout_seconds + 1.5


@pytest.mark.parametrize("mode", ["unparseable", "garbage"])
def test_an_answer_that_does_not_parse_is_asked_once_more_then_fails(llm, mode):
    llm.mode = mode
    with pytest.raises(LLMFailed):
        get_llm().ask(Title, *ASK)
    assert 2 <= len(llm.chat_calls) <= 2 * (1 + get_settings().llm_max_retries)


def test_a_prompt_over_the_cap_is_never_sent(llm):
    cap = get_settings().llm_prompt_max_chars
    with pytest.raises(ValueError, match="LOOM_LLM_PROMPT_MAX_CHARS"):
        get_llm().ask(Title, "Give a title.", "word " * cap)
    assert llm.chat_calls == []
