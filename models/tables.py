"""Every table, registered on the metadata when imported (``models.db`` does, for every session)."""

from models.conversation import Embedding, Thread, Turn
from models.cursor_key import CursorKey
from models.memory import Loom, LoomSession, MemoryEvidence, MemoryThread, NightWeaving
from models.namespace import ApiToken, Namespace
from models.observation import Observation
from models.pass_run import PassRun
from models.stage_run import StageRun
from models.transcript import Transcript
from models.working_memory import WorkingMemory, WorkingMemoryRevision

__all__ = [
    "ApiToken",
    "CursorKey",
    "Embedding",
    "Loom",
    "LoomSession",
    "MemoryEvidence",
    "MemoryThread",
    "Namespace",
    "NightWeaving",
    "Observation",
    "PassRun",
    "StageRun",
    "Thread",
    "Transcript",
    "Turn",
    "WorkingMemory",
    "WorkingMemoryRevision",
]
