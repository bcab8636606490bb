"""What the continuity benchmark measures, from what the runner played and read back.

- **reached unprompted**: a needed fact reached the agent's context without the agent asking when
  its text was in what a hook put into the model's context in the session that needs it: the
  SessionStart output (the tapestry), or a UserPromptSubmit output of the prompt that needs it or
  of an earlier prompt of that session. Its text is the extracted thread's content (the first 60
  characters, case and spacing aside), so a fact is found however the hooks frame their lines.
  ``offered_by_server`` is the same from Loom's side: the fact's thread among the LoomSession's
  tapestry or suggested ids (a fact the server offered but no hook printed shows up as the gap).
- **searched**: the agent's own loom_memory_search for that prompt (``--recall always``) had the
  fact's thread among its hits: what an agent that always searches would find, for contrast.
- **offered then recalled**: of the threads a session was offered (LoomSession tapestry and
  suggested ids), the share also in its recalled ids at the end of the session. The benchmark's
  agent recalls only by that simulated search, and the session learns of it only if the plugin's
  PostToolUse hook records it (memory.session_record): so this measures whether offers and recall
  meet in the LoomSession night weaving judges, not whether a real agent would use what it was
  offered.
- **stale**: a fact another one superseded (a decision reversed) shown in a session after it was
  reversed.
- **tokens**: ceil(characters / 4) of what each event's hooks put into the context (the contract's
  rule, ``pipelines/token_budget.py``), per session start and per prompt.
- **latency**: the wall time of each hook process, start to exit, by event.
- **nights**: per night, the night-weaving runs' results: sessions consolidated, episodes written,
  threads judged (used / unused) and weights moved up or down.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from client import HookRun
from harness import percentile, rounded
from scenario import Fact, Scenario

SHOWN_CHARS = 60


@dataclass
class SessionPlayed:
    day: int
    session_id: str
    start: list[HookRun] = field(default_factory=list)
    prompts: list[list[HookRun]] = field(default_factory=list)
    searched: list[list[str]] = field(default_factory=list)  # thread ids the agent's search found
    recall_runs: list[HookRun] = field(default_factory=list)
    end: list[HookRun] = field(default_factory=list)


@dataclass
class Played:
    scenario: Scenario
    namespace: str
    sessions: list[SessionPlayed] = field(default_factory=list)
    threads: list[dict] = field(default_factory=list)
    loom_sessions: dict[str, dict] = field(default_factory=dict)
    runs: list[HookRun] = field(default_factory=list)  # every hook run, in order


def tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def shown(fact: Fact, context: str) -> bool:
    return bool(context) and _norm(fact.content)[:SHOWN_CHARS] in _norm(context)


def _context(runs: list[HookRun]) -> str:
    return "\n".join(r.context for r in runs if r.context)


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def _spread(values: Sequence[float], digits: int = 1) -> dict:
    return {
        "n": len(values),
        "mean": rounded(sum(values) / len(values), digits) if values else None,
        "p50": rounded(percentile(values, 50), digits),
        "p95": rounded(percentile(values, 95), digits),
        "max": rounded(max(values), digits) if values else None,
    }


def needs(p: Played) -> list[dict]:
    """One row a needed fact, in the session and prompt that need it."""
    threads = {
        f.id: [t["id"] for t in p.threads if _norm(t["content"]) == _norm(f.content)]
        for f in p.scenario.facts.values()
    }
    rows = []
    for played in p.sessions:
        start = _context(played.start)
        said = [_context(runs) for runs in played.prompts]
        server = p.loom_sessions.get(played.session_id, {})
        offered = set(server.get("tapestry_thread_ids", [])) | set(server.get("suggested_thread_ids", []))
        for j, prompt in enumerate(p.scenario.sessions[played.day]):
            for need in prompt.needs:
                fact, ids = p.scenario.facts[need], threads[need]
                rows.append(
                    {
                        "scenario": p.scenario.name,
                        "session": played.day + 1,
                        "prompt": j + 1,
                        "fact": need,
                        "extracted": bool(ids),
                        "tapestry": shown(fact, start),
                        "suggested_here": shown(fact, said[j]),
                        "suggested_earlier": any(shown(fact, c) for c in said[:j]),
                        "offered_by_server": bool(offered & set(ids)),
                        "held_back": bool(set(server.get("held_back_thread_ids", [])) & set(ids)),
                        "searched": bool(set(played.searched[j]) & set(ids))
                        if j < len(played.searched)
                        else False,
                    }
                )
    for row in rows:
        row["reached"] = row["tapestry"] or row["suggested_here"] or row["suggested_earlier"]
    return rows


def stale(p: Played) -> list[dict]:
    """Superseded facts shown in a session after the one that superseded them."""
    out = []
    for newer in p.scenario.facts.values():
        if newer.supersedes is None:
            continue
        older = p.scenario.facts[newer.supersedes]
        for played in p.sessions:
            if played.day <= p.scenario.stated_in(newer.id):
                continue
            contexts = [_context(played.start), *(_context(r) for r in played.prompts)]
            out.append(
                {
                    "scenario": p.scenario.name,
                    "session": played.day + 1,
                    "older": older.id,
                    "older_shown": any(shown(older, c) for c in contexts),
                    "newer_shown": any(shown(newer, c) for c in contexts),
                }
            )
    return out


def offers(p: Played) -> dict:
    offered = recalled = both = 0
    for played in p.sessions:
        server = p.loom_sessions.get(played.session_id, {})
        o = set(server.get("tapestry_thread_ids", [])) | set(server.get("suggested_thread_ids", []))
        r = set(server.get("recalled_thread_ids", []))
        offered, recalled, both = offered + len(o), recalled + len(r), both + len(o & r)
    return {"offered": offered, "recalled": recalled, "offered_and_recalled": both}


def suggestion_use(p: Played) -> dict:
    """Threads suggested per prompt (server side) and how many were a fact the session needed."""
    ids = {t["id"]: _norm(t["content"]) for t in p.threads}
    suggested = needed = 0
    for played in p.sessions:
        wanted = {
            _norm(p.scenario.facts[n].content)
            for prompt in p.scenario.sessions[played.day]
            for n in prompt.needs
        }
        mine = p.loom_sessions.get(played.session_id, {}).get("suggested_thread_ids", [])
        suggested += len(mine)
        needed += sum(1 for t in mine if ids.get(t) in wanted)
    return {"suggested": suggested, "needed": needed}


def nights_summary(nights: list[dict]) -> list[dict]:
    out = []
    for n in nights:
        runs = n["runs"]
        moved = [w for r in runs for w in r.get("reweighed", [])]
        out.append(
            {
                "after_day": n["after_day"],
                "seconds": n["seconds"],
                "runs": len(runs),
                "consolidated": sum(1 for r in runs if r["status"] == "succeeded"),
                "episodes": sum(r.get("episodes", 0) for r in runs),
                "judged": sum(r.get("judged", 0) for r in runs),
                "used": sum(r.get("used", 0) for r in runs),
                "weights_up": sum(1 for w in moved if w["after"] > w["before"]),
                "weights_down": sum(1 for w in moved if w["after"] < w["before"]),
            }
        )
    return out


def examples(people: list[Played], chars: int = 4000) -> dict:
    """What reached the agent, to read: each scenario's last session start and every prompt's
    suggestions that were not empty."""
    return {
        p.scenario.name: {
            "last_session_start": _context(p.sessions[-1].start)[:chars] if p.sessions else "",
            "suggestions": [
                {"session": s.day + 1, "prompt": j + 1, "context": _context(runs)[:chars]}
                for s in p.sessions
                for j, runs in enumerate(s.prompts)
                if _context(runs)
            ],
        }
        for p in people
    }


def summary(people: list[Played], nights: list[dict]) -> dict:
    rows = [row for p in people for row in needs(p)]
    stales = [row for p in people for row in stale(p)]
    every = [r for p in people for r in p.runs]  # every hook run, PostToolUse and Stop too
    latency = {
        event: _spread([r.seconds * 1000 for r in every if r.event == event], 0)
        for event in sorted({r.event for r in every})
    }
    start_tokens = [tokens(_context(s.start)) for p in people for s in p.sessions]
    prompt_tokens = [tokens(_context(runs)) for p in people for s in p.sessions for runs in s.prompts]
    offer = [offers(p) for p in people]
    o, b = sum(x["offered"] for x in offer), sum(x["offered_and_recalled"] for x in offer)
    facts = [(p, f) for p in people for f in p.scenario.facts.values()]
    extracted = sum(1 for p, f in facts if any(_norm(t["content"]) == _norm(f.content) for t in p.threads))
    failed = [r for r in every if r.returncode != 0 or r.stderr]
    return {
        "scenarios": len(people),
        "sessions": sum(len(p.sessions) for p in people),
        "prompts": len(prompt_tokens),
        "facts": len(facts),
        "facts_extracted": extracted,
        "needed": len(rows),
        "reached_unprompted": _share(sum(r["reached"] for r in rows), len(rows)),
        "reached_by_tapestry": _share(sum(r["tapestry"] for r in rows), len(rows)),
        "reached_by_suggestion": _share(
            sum(r["suggested_here"] or r["suggested_earlier"] for r in rows), len(rows)
        ),
        "offered_by_server": _share(sum(r["offered_by_server"] for r in rows), len(rows)),
        "found_by_agent_search": _share(sum(r["searched"] for r in rows), len(rows)),
        "stale_shown": _share(sum(r["older_shown"] for r in stales), len(stales)),
        "suggestions": {
            "offered": (offered := sum(suggestion_use(p)["suggested"] for p in people)),
            "of_a_needed_fact": (useful := sum(suggestion_use(p)["needed"] for p in people)),
            "precision": _share(useful, offered),
        },
        "offered_then_recalled": {"offered": o, "recalled_of_them": b, "share": _share(b, o)},
        "tokens_session_start": _spread(start_tokens),
        "tokens_per_prompt": _spread(prompt_tokens),
        "prompts_with_injection": sum(1 for t in prompt_tokens if t),
        "hook_latency_ms": latency,
        "hook_problems": [{"event": r.event, "code": r.returncode, "stderr": r.stderr[:300]} for r in failed][
            :20
        ],
        "nights": nights_summary(nights),
        "by_scenario": {
            p.scenario.name: {
                "needed": len(mine := [r for r in rows if r["scenario"] == p.scenario.name]),
                "reached": sum(r["reached"] for r in mine),
                "searched": sum(r["searched"] for r in mine),
                **offers(p),
            }
            for p in people
        },
        "needs": rows,
        "stale": stales,
        "examples": examples(people),
    }


def render(out: dict) -> str:
    """The report as a few plain-text tables."""
    lines = [
        f"continuity: {out['scenarios']} scenarios, {out['sessions']} sessions, {out['prompts']} prompts, "
        f"{out['needed']} needed facts ({out['facts_extracted']}/{out['facts']} facts extracted)",
        "",
        f"{'scenario':24} {'needed':>6} {'reached':>7} {'searched':>8} {'offered':>7} {'recalled':>8}",
    ]
    for name, s in out["by_scenario"].items():
        lines.append(
            f"{name:24} {s['needed']:>6} {s['reached']:>7} {s['searched']:>8} {s['offered']:>7} "
            f"{s['offered_and_recalled']:>8}"
        )
    lines += [
        "",
        f"reached unprompted {out['reached_unprompted']} (tapestry {out['reached_by_tapestry']}, suggestion "
        f"{out['reached_by_suggestion']}); offered by the server {out['offered_by_server']}; found by the "
        f"agent's search {out['found_by_agent_search']}; stale shown {out['stale_shown']}",
        f"offered then recalled: {out['offered_then_recalled']}; suggestions: {out['suggestions']}",
        f"tokens at session start {out['tokens_session_start']}",
        f"tokens per prompt {out['tokens_per_prompt']} ({out['prompts_with_injection']} prompts with any)",
        "",
        f"{'hook (ms)':18} {'n':>4} {'p50':>6} {'p95':>6} {'max':>6}",
    ]
    for event, s in out["hook_latency_ms"].items():
        lines.append(f"{event:18} {s['n']:>4} {s['p50']:>6} {s['p95']:>6} {s['max']:>6}")
    lines += [
        "",
        f"{'night after day':16} {'runs':>5} {'episodes':>8} {'judged':>6} {'used':>5} {'up':>4} {'down':>5}",
    ]
    for n in out["nights"]:
        lines.append(
            f"{n['after_day']:<16} {n['runs']:>5} {n['episodes']:>8} {n['judged']:>6} {n['used']:>5} "
            f"{n['weights_up']:>4} {n['weights_down']:>5}"
        )
    return "\n".join(lines)
