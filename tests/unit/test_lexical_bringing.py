"""Which query words bring the lexical leg's candidates (``pipelines.lexical.bringing``), and how
much each weighs (``idf``)."""

import pytest

from pipelines import lexical


@pytest.fixture(autouse=True)
def budget(monkeypatch):
    monkeypatch.setattr(lexical, "CANDIDATE_BUDGET", 1_000)


def test_the_rarest_words_bring_candidates_while_their_turns_fit_the_budget():
    dfs = {"ledger": 600, "invoic": 30, "move": 300, "week": 900}
    assert lexical.bringing(dfs, n=100_000) == ["invoic", "move", "ledger"]  # 930 turns fit; 1,830 do not


def test_the_rarest_word_brings_candidates_even_past_the_budget_or_common():
    assert lexical.bringing({"everywher": 5_000, "also": 9_000}, n=10_000) == ["everywher"]


def test_a_common_word_never_brings_candidates_beside_a_rarer_one():
    # 150 of 1,000 turns is past the 10 % share, and past the 100-turn floor.
    assert lexical.bringing({"rare": 3, "common": 150}, n=1_000) == ["rare"]
    # In a small corpus the floor keeps a word that many turns hold from being called common.
    assert lexical.bringing({"rare": 3, "often": 40}, n=200) == ["rare", "often"]


def test_ties_are_broken_by_the_word_so_the_choice_is_stable():
    assert lexical.bringing({"b": 500, "a": 500, "c": 500}, n=1_000_000) == ["a", "b"]


def test_a_word_no_turn_holds_is_not_the_rarest_that_always_brings():
    # "zyxq" brings nothing; "also" is common, but the rarest word that some turn holds.
    assert lexical.bringing({"zyxq": 0, "also": 9_000}, n=10_000) == ["also"]
    assert lexical.bringing({"zyxq": 0, "rare": 3, "common": 150}, n=1_000) == ["rare"]
    assert lexical.bringing({"zyxq": 0}, n=1_000) == []


def test_an_idf_is_never_below_zero_and_falls_as_a_word_grows_common():
    assert lexical.idf(10, 50) == 0.0  # a df above N (statistics that lag) weighs nothing
    assert lexical.idf(1000, 1) > lexical.idf(1000, 10) > lexical.idf(1000, 1000) > 0.0
