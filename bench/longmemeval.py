"""The LongMemEval oracle file as the benchmarks use it: every session once, its user and assistant
turns with the msg ids the benchmarks append them under."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

DEFAULT_DATA = Path("/work/shared/data/longmemeval_oracle.json")


@dataclass(frozen=True)
class Turn:
    session_id: str
    index: int
    role: str
    content: str

    @property
    def msg_id(self) -> str:
        return msg_id(self.session_id, self.index)


def msg_id(session_id: str, index: int) -> str:
    return f"{session_id}:{index}"


def load_records(path: Path = DEFAULT_DATA) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))


def unique_sessions(records: list[dict]) -> dict[str, list[Turn]]:
    """Every session once, by id, in order of first appearance; user/assistant turns only (the
    index stays the turn's position in the session, so msg ids match the data set's)."""
    sessions: dict[str, list[Turn]] = {}
    for record in records:
        for session_id, session in zip(
            record["haystack_session_ids"], record["haystack_sessions"], strict=True
        ):
            if session_id in sessions:
                continue
            sessions[session_id] = [
                Turn(session_id, i, t["role"], t["content"])
                for i, t in enumerate(session)
                if t["role"] in ("user", "assistant")
            ]
    return sessions
