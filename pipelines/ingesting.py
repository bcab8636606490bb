"""Keeping a transcript handed over whole (conversation.ingest) until its ingest run parses it: the
raw text is stored once per thread, agent and digest, so the same piece handed over again is the
same row (and the same run)."""

from dataclasses import dataclass

from sqlalchemy import ColumnElement
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import Session, col, select

from models.base import stored, utcnow
from models.stage_run import StageRun
from models.transcript import Transcript
from pipelines import keys


@dataclass(frozen=True)
class Kept:
    transcript_id: int
    version: str  # the ingest run's version: the transcript's digest, shortened


def keep(
    s: Session, namespace: str, thread_id: str, agent: str, source: str | None, raw: str, first_line: int
) -> Kept:
    """The stored transcript of this text (written unless it was handed over before)."""
    # The same lines at another place of the file are another piece (Cursor keys turns by line).
    digest = keys.digest(raw, *([str(first_line)] if first_line != 1 else []))
    s.exec(
        insert(Transcript)
        .values(
            namespace=namespace,
            thread_id=thread_id,
            agent=agent,
            source=source,
            raw=raw,
            first_line=first_line,
            digest=digest,
            size_bytes=len(raw.encode()),
            created_at=utcnow(),
        )
        .on_conflict_do_nothing(index_elements=["namespace", "thread_id", "agent", "digest"])
    )
    transcript_id = stored(
        s.exec(
            select(col(Transcript.id)).where(
                col(Transcript.namespace) == namespace,
                col(Transcript.thread_id) == thread_id,
                col(Transcript.agent) == agent,
                col(Transcript.digest) == digest,
            )
        ).one()
    )
    return Kept(transcript_id, digest[:16])


def run_status(s: Session, idem_key: ColumnElement[str]) -> str | None:
    """The status of the run of that key (``Stage.key``'s) before it is requested (None: never
    requested)."""
    return s.exec(select(col(StageRun.status)).where(col(StageRun.idem_key) == idem_key)).first()
