"""The rules' tables (word lists, pattern tables), kept as data in the TOML files of `data/` beside
this module, each read once, when the rule module that holds it is imported."""

from __future__ import annotations

import functools
import tomllib
from importlib import resources
from typing import Any


@functools.cache
def table(name: str) -> dict[str, Any]:
    """The tables of `data/<name>.toml` (package data: it ships with a non-editable install)."""
    text = resources.files(__package__).joinpath("data", f"{name}.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)
