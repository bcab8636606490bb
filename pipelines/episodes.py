"""A session's observations (a coding agent's tool actions) as Episodic memory threads: what
``observe.crystallize`` hands the extraction stage, and what it writes from them.

Each observation is kept as evidence (role ``tool``, msg_id ``obs:<id>``: ``memory.recall`` finds
it) as one line. A batch with nothing worth remembering (only reads, searches and listings: no
file changed, no command that does more than read, no other tool failed) makes no episode, and no
model is asked. Otherwise the model, when there is one, is asked for the episodes worth
remembering, citing those lines; without one the deterministic builder here writes them in plain
sentences (the one place where no model still gives memories): one episode of what the agent did
(the files it edited, the commands it ran and how each went: a failed command followed by a run of
the same one that succeeded counts as fixed, and says after which edits), and one for each command
or tool that failed (why, and whether it was fixed). Each is keyed, so writing a batch's episodes
twice writes them once."""

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from uuid import UUID

from sqlmodel import Session, col, select

from models.base import stored
from models.memory import MemoryEvidence
from models.observation import Observation
from pipelines import keys, memory, prose, screening, tool_actions

ROLE = "tool"
MSG_PREFIX = "obs:"
INSTRUCTIONS = (
    "You keep the memory of a coding agent's work. The lines are the tool actions of one session, "
    "in order. List the episodes worth remembering later: what was worked on (name the files), "
    "what was run, what failed and why, and what fixed it. Write each episode as one short "
    "self-contained sentence in the past tense. Cite the numbers of the lines each comes from. "
    "Return no episodes when nothing happened worth remembering."
)
SHOWN_FILES, SHOWN_RUNS, SHOWN_FAILURES, FIX_FILES, FAILURE_EPISODES = 5, 4, 3, 3, 5
LINE_FILES, NAME_CHARS, REASON_CHARS = (
    8,
    80,
    120,
)  # files an evidence line names; chars of a command named, of an error's line


@dataclass(frozen=True)
class Action:
    """An observation as the builder reads it."""

    evidence_id: int
    tool: str
    input_sha256: str
    summary: str
    outcome: str
    files: tuple[str, ...]
    error: str | None
    ts: datetime


def line(tool: str, summary: str, outcome: str, files: list[str], error: str | None) -> str:
    """The evidence line of an action: what the model reads, and memory.recall finds."""
    text = f"{tool}: {summary}"
    if files and not any(f in summary for f in files):
        text += f" [files: {', '.join(files[:LINE_FILES])}]"
    if outcome == "error":
        first = _first_line(error, 300)
        text += f" -> failed: {first}" if first else " -> failed"
    return text


def _first_line(error: str | None, chars: int) -> str:
    return error.strip().splitlines()[0][:chars] if error and error.strip() else ""


def msg_id(observation_id: int) -> str:
    return f"{MSG_PREFIX}{observation_id}"


def worth_remembering(actions: list[Action]) -> bool:
    """Whether a batch makes any episode: it changed a file, ran a command that does more than read
    or list, or a tool other than a look failed. A batch of reads, searches and listings (and their
    failures: a grep that matched nothing) makes none, by the builder or by the model."""
    return any(_noted(a) for a in actions)


def _noted(a: Action) -> bool:
    kind = tool_actions.kind(a.tool, a.summary)
    if kind == tool_actions.CHANGE:
        return a.outcome == "ok"  # an edit the tool refused changed nothing
    return kind == tool_actions.COMMAND or (kind == tool_actions.OTHER and a.outcome == "error")


@dataclass(frozen=True)
class Runs:
    """A command (or another tool) and where it ran in the batch, in order."""

    name: str  # the command as written, or the tool's name
    kind: str
    at: list[int]


def _runs(actions: list[Action]) -> list[Runs]:
    """The batch's commands, and the other tools that failed, in the order each first ran (one whose
    name reads as high left out)."""
    found: dict[tuple[str, str], Runs] = {}
    for i, a in enumerate(actions):
        kind = tool_actions.kind(a.tool, a.summary)
        if kind in (tool_actions.COMMAND, tool_actions.OTHER):
            name = tool_actions.command(a.summary) if kind == tool_actions.COMMAND else a.tool
            name = prose.clipped(name, NAME_CHARS).replace("`", "'")
            found.setdefault((kind, name), Runs(name, kind, [])).at.append(i)  # a command whatever ran it
    return [
        r
        for r in found.values()
        if (r.kind == tool_actions.COMMAND or _failed(actions, r)) and not screening.is_high(f"`{r.name}`")
    ]


def _failed(actions: list[Action], runs: Runs) -> list[int]:
    return [i for i in runs.at if actions[i].outcome == "error"]


def _fix(actions: list[Action], runs: Runs) -> tuple[int | None, list[int]]:
    """The run that succeeded after the last failure and the edits made in between (None and none
    when no run did)."""
    last = _failed(actions, runs)[-1]
    fix = next((i for i in runs.at if i > last), None)
    return fix, [] if fix is None else [i for i in range(last + 1, fix) if _changed(actions[i])]


def _changed(a: Action) -> bool:
    return a.outcome == "ok" and tool_actions.kind(a.tool, a.summary) == tool_actions.CHANGE


def _files(actions: list[Action]) -> list[str]:
    return list(dict.fromkeys(f for a in actions for f in (a.files or (a.summary,))))


def _after(actions: list[Action], edits: list[int]) -> str:
    files = _files([actions[i] for i in edits])
    if not files:
        return ""
    return f" after {'an edit' if len(edits) == 1 else 'edits'} to {prose.listed(files, FIX_FILES, 'file')}"


def _said(failed: list[int]) -> str:
    return "failed" if len(failed) == 1 else f"failed {prose.times(len(failed))}"


def _outcome(actions: list[Action], runs: Runs) -> str:
    """How the runs went: ``succeeded``; ``failed twice, then succeeded after an edit to a.py``;
    ``failed, not fixed``."""
    failed = _failed(actions, runs)
    if not failed:
        return "succeeded"
    fix, edits = _fix(actions, runs)
    if fix is not None:
        return f"{_said(failed)}, then succeeded{_after(actions, edits)}"
    return f"{'succeeded at first, then ' if runs.at[0] < failed[0] else ''}{_said(failed)}, not fixed"


def _when(actions: list[Action]) -> str:
    first, last = (f"{a.ts.astimezone(UTC):%Y-%m-%d}" for a in (actions[0], actions[-1]))
    return f"On {first}" if first == last else f"From {first} to {last}"


def _told(actions: list[Action], runs: list[Runs]) -> list[str]:
    """What the agent did, clause by clause: the files it edited, the commands that succeeded, and
    each command or other tool that failed with how it went."""
    told = []
    if changed := _files([a for a in actions if _changed(a)]):
        told.append(f"edited {prose.listed(changed, SHOWN_FILES, 'file')}")
    if fine := [f"`{r.name}`" for r in runs if not _failed(actions, r)]:
        told.append(f"ran {prose.listed(fine, SHOWN_RUNS, 'command')} successfully")
    for kind, verb, noun in (
        (tool_actions.COMMAND, "ran", "failing command"),
        (tool_actions.OTHER, "used", "failing tool"),
    ):
        failing = [
            f"`{r.name}` ({_outcome(actions, r)})" for r in runs if r.kind == kind and _failed(actions, r)
        ]
        if failing:
            told.append(f"{verb} {prose.listed(failing, SHOWN_RUNS, noun)}")
    return told


def _failure(actions: list[Action], runs: Runs, place: str) -> tuple[str, list[str], list[int]] | None:
    """The episode of a command or tool that failed (why, and whether a later run succeeded, after
    which edits): its text, its files, the evidence it cites; None when it would say no more than
    the story does (no error line to quote, no edit that fixed it)."""
    failed = _failed(actions, runs)
    first = actions[failed[0]]
    why = tool_actions.reason(first.error, REASON_CHARS)
    why = "" if screening.is_high(why) else why
    fix, edits = _fix(actions, runs)
    if not (why or edits):
        return None
    text = prose.ended(
        f"{_when([first])}, {place}, `{runs.name}` {_said(failed)}" + (f' with "{why}"' if why else "")
    )
    if fix is None:
        cited = failed[:SHOWN_FAILURES]
        text += " It did not succeed later in the session."
    else:
        cited = [failed[0], *edits[:SHOWN_FILES], fix]
        text += f" It later succeeded{_after(actions, edits)}."
    files = list(dict.fromkeys([*first.files, *_files([actions[i] for i in edits])]))
    return text, files, [actions[i].evidence_id for i in cited]


def built(
    loom_id: UUID, session_id: str, where: str | None, actions: list[Action], agent: str, run_id: str | None
) -> list[memory.NewMemory]:
    """The deterministic episodes of a batch of actions (in the order they ran; none reads as
    high): one of what the agent did, and one for each command or tool that failed whose error or
    fix says more. A batch whose whole story is one failure is told once, by that failure's episode
    (citing the batch); one with nothing worth remembering makes none. ``where``: "project/branch",
    when known."""
    runs = _runs(actions) if worth_remembering(actions) else []
    told = _told(actions, runs)
    if not told:
        return []
    place = f"in session {session_id}" + (f" on {where}" if where else "")
    cited, key = [a.evidence_id for a in actions], _key(loom_id, session_id, "batch", actions[0], actions[-1])
    failures = [
        _episode(
            *failure, _key(loom_id, session_id, "failure", actions[_failed(actions, r)[0]]), agent, run_id
        )
        for r in runs
        if _failed(actions, r) and (failure := _failure(actions, r, place))
    ][:FAILURE_EPISODES]
    if len(told) == len(runs) == len(failures) == 1:  # the failure is the whole story
        episodes = [replace(failures[0], evidence_ids=cited, source_key=key[:32])]
    else:
        changed = _files([a for a in actions if _changed(a)])
        text = f"{_when(actions)}, {place}, the agent {prose.clauses(told)}."
        episodes = [_episode(text, changed, cited, key, agent, run_id), *failures]
    return [e for e in episodes if not screening.is_high(e.content)]


def _key(loom_id: UUID, session_id: str, what: str, *among: Action) -> str:
    return keys.digest(str(loom_id), session_id, what, *(str(a.evidence_id) for a in among))


def _episode(
    text: str, files: list[str], cited: list[int], key: str, agent: str, run_id: str | None
) -> memory.NewMemory:
    return memory.NewMemory(
        content=text[:2_000],
        kind="Episodic",
        weight=0.5,
        basis="Extracted",
        subjects=[f[:200] for f in files[:32]],
        agent=agent,
        run_id=run_id,
        evidence_ids=cited,
        source_key=key[:32],
    )


@dataclass(frozen=True)
class Batch:
    actions: list[Action]
    where: str | None  # "project/branch" of the session's actions, when they say


def batch(s: Session, evidence: list[MemoryEvidence]) -> Batch:
    """The evidence of a batch as the actions it keeps (in the order they ran), none that reads as
    high; an observation erased since is left out."""
    ids = [int(row.msg_id.removeprefix(MSG_PREFIX)) for row in evidence if row.msg_id.startswith(MSG_PREFIX)]
    seen = {msg_id(stored(o.id)): o for o in s.exec(select(Observation).where(col(Observation.id).in_(ids)))}
    actions = [
        Action(stored(row.id), o.tool, o.input_sha256, o.summary, o.outcome, tuple(o.files), o.error, row.ts)
        for row in sorted(evidence, key=lambda e: (e.ts, e.id))
        if (o := seen.get(row.msg_id)) is not None and row.sensitivity != screening.HIGH
    ]
    placed = next((o for o in seen.values() if o.project), None)
    where = (
        f"{placed.project}/{placed.branch}"
        if placed and placed.branch
        else placed.project
        if placed
        else None
    )
    return Batch(actions, where)
