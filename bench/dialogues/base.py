"""The set's constants, and the loader of its templates and word pools (data/*.json)."""

from __future__ import annotations

import json
from pathlib import Path

SEED = 20240917
HERE = Path(__file__).resolve().parent
OUT = HERE / "short_turns.json"
N_CONV = 12
PARA_SINGLE = 0.2  # share of single-hop questions worded away from their evidence (<= 1 shared word)
PARA_OTHER = 0.15  # the same for temporal and knowledge-update questions
PARA_MULTI = 0.1  # the same for multi-hop questions (pets and the like are worded away anyway)


def data(name: str) -> dict:
    """The templates and word pools of one kind of material, kept as data in data/<name>.json."""
    return json.loads((HERE / "data" / f"{name}.json").read_text(encoding="utf-8"))


def linked(value, names: dict):
    """`value` (read from data/) with each {"$": name} made the object of that name in `names` (the
    reading module's globals): a kind's slot function or condition."""
    if isinstance(value, dict):
        if value.keys() == {"$"}:
            return names[value["$"]]
        return {k: linked(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [linked(v, names) for v in value]
    return value
