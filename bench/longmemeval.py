"""The LongMemEval oracle file as the benchmarks use it: every session once, its user and assistant
turns with the msg ids the benchmarks append them under."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

DEFAULT_DATA = Path("/work/shared/data/longmemeval_oracle.json")


@dataclass(frozen=True)
class Turn:
    session_id: str
    index: int
    role: str
    content: str
    said: str | None = None  # when it was said (ISO, UTC), for a bench that sends the data's times
    speaker: str | None = None  # the speaker's name, where the data names one (the dialogue sets)

    @property
    def msg_id(self) -> str:
        return msg_id(self.session_id, self.index)


def msg_id(session_id: str, index: int) -> str:
    return f"{session_id}:{index}"


def load_records(path: Path = DEFAULT_DATA) -> list[dict]:
    """The file's question records; a file written once per conversation (the dialogue set,
    ``bench/dialogues/``) is expanded into them, each question carrying its conversation."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, list) else list(expanded(data))


def expanded(data: dict):
    for q in data["questions"]:
        conversation = data["conversations"][q["conversation"]]
        marks = {tuple(place) for place in q["evidence"]}
        sessions = [
            [{**turn, "has_answer": (s, i) in marks} for i, turn in enumerate(session)]
            for s, session in enumerate(conversation["sessions"])
        ]
        yield {
            **{k: v for k, v in q.items() if k not in ("conversation", "evidence")},
            "haystack_session_ids": conversation["session_ids"],
            "haystack_dates": conversation["dates"],
            "haystack_sessions": sessions,
            "answer_session_ids": sorted({conversation["session_ids"][s] for s, _ in marks}),
        }


def said_at(stamp: str) -> str:
    """The data set's date ("2023/05/20 (Sat) 02:21") as an ISO time in UTC."""
    return datetime.strptime(stamp, "%Y/%m/%d (%a) %H:%M").replace(tzinfo=UTC).isoformat()


def unique_sessions(records: list[dict], dated: bool = False) -> dict[str, list[Turn]]:
    """Every session once, by id, in order of first appearance; user/assistant turns only (the
    index stays the turn's position in the session, so msg ids match the data set's). ``dated``:
    each turn said at its session's date (the first record's, for the few sessions records date
    apart), a second after the turn before it."""
    sessions: dict[str, list[Turn]] = {}
    for record in records:
        for session_id, date, session in zip(
            record["haystack_session_ids"], record["haystack_dates"], record["haystack_sessions"], strict=True
        ):
            if session_id in sessions:
                continue
            began = datetime.fromisoformat(said_at(date))
            sessions[session_id] = [
                Turn(
                    session_id,
                    i,
                    t["role"],
                    t["content"],
                    (began + timedelta(seconds=i)).isoformat() if dated else None,
                    t.get("speaker"),
                )
                for i, t in enumerate(session)
                if t["role"] in ("user", "assistant")
            ]
    return sessions
