"""Titling a thread: the prompt from its first turns (never one that reads as high), the title
the model's answer gives, and the thread's title or its refusal mark. Plain functions; the stage
(``workers/stages/titling.py``) adds the run, and the titler pass (``schedules/titling.py``) picks
the threads."""

import json
from dataclasses import dataclass
from datetime import datetime

from pydantic import BaseModel, Field
from sqlmodel import Session, col, select

from models.conversation import EMBEDDED_ROLES, Thread, Turn
from models.queries import threads as queries
from models.settings import get_settings
from pipelines import keys, screening

REFUSED = "title_refused"  # the metadata mark
EVERY_TURN_HIGH, TITLE_HIGH = REFUSALS = ("every-turn-high", "title-high-sensitivity")
FIRST_TURNS = 8
TURN_CHARS = 500  # of each turn, in the prompt (less when LOOM_LLM_PROMPT_MAX_CHARS is small)
TITLE_MAX_CHARS = 80
INSTRUCTIONS = (
    "Write a short title (three to eight words) for the conversation below, naming its subject. "
    "No quotes, no trailing punctuation."
)


class Title(BaseModel):
    title: str = Field(min_length=1, description="the conversation's title")


def first_turns(s: Session, thread: Thread) -> list[Turn]:
    return list(
        s.exec(
            select(Turn)
            .where(
                col(Turn.namespace) == thread.namespace,
                col(Turn.thread_id) == thread.thread_id,
                col(Turn.role).in_(EMBEDDED_ROLES),
                col(Turn.deleted_at).is_(None),
            )
            .order_by(col(Turn.ts), col(Turn.id))
            .limit(FIRST_TURNS)
        )
    )


def prompt(first: list[Turn]) -> str | None:
    """The prompt of the first turns, each cut to fit the prompt cap and screened as it would be
    sent (a cut can make a shape); None when nothing plain is left to send."""
    cut = min(TURN_CHARS, (get_settings().llm_prompt_max_chars - len(INSTRUCTIONS)) // FIRST_TURNS - 16)
    lines = [f"{turn.role}: {turn.content[:cut]}" for turn in first if turn.sensitivity != "high"]
    plain = [line for line in lines if not screening.is_high(line)]
    if not plain or screening.is_high("\n".join(plain)):
        return None
    return "\n".join(plain)


def cleaned(answer: Title) -> str:
    return " ".join(answer.title.split()).strip(" \"'.")[:TITLE_MAX_CHARS]


def set_title(s: Session, thread_row_id: int, title: str) -> None:
    s.execute(queries.SET_TITLE, {"title": title, "id": thread_row_id})


def mark_refused(s: Session, thread_row_id: int) -> None:
    s.execute(queries.MARK_TITLE_REFUSED, {"mark": REFUSED, "id": thread_row_id})


@dataclass(frozen=True)
class Candidate:
    thread_row_id: int
    version: str  # what the request is for: the thread as it stands (newest turn, metadata, refusals)


def candidates(s: Session, since: datetime, min_turns: int, limit: int) -> list[Candidate]:
    """Threads that want a title and were not asked as they stand, newest first."""
    params = {
        "since": since,
        "min_turns": min_turns,
        "limit": limit,
        "refusals": list(REFUSALS),
        "mark": REFUSED,
    }
    return [
        Candidate(row_id, keys.digest(str(newest), json.dumps(meta, sort_keys=True), str(refusals))[:16])
        for row_id, meta, newest, refusals in s.execute(queries.TITLE_CANDIDATES, params).all()
    ]
