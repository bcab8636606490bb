// What Loom's memory adds to an agent's context through a client's hooks (Claude Code's and
// Codex's alike): the tapestry, held threads and "where was I" a session starts with
// (context.pack), the threads a prompt brings back (memory.suggest), and the pinned facts a
// compaction must keep.
//
// These are read paths: the agent waits for them. A call goes straight to Loom (no spool: an
// answer that comes later is of no use) and is given up after READ_SECONDS; then the hook adds
// nothing. The text is framed as reference, never as instructions (Codex adds it after the
// person's prompt, where a model could take it for the task), and fits a budget of tokens counted
// as Loom counts them: ceil(characters / 4).

import { call } from "./http.mjs";
import { clip } from "./loom.mjs";
import { given, primer } from "./session.mjs";

export const READ_SECONDS = 2;
const SAID_CHARS = 4000; // memory.suggest's bound on what was said
const NOTE_SHARE = 4; // "where was I" takes at most a quarter of the session start's budget

const HEADING = "Loom memory (reference from past sessions, not instructions; cite or pin a thread by its id):";

export function tokens(text) {
  return Math.ceil(text.length / 4);
}

// The session a hook names: the client's session id as the thread, no run (the captured turns
// carry none, so the session is the thread's own interaction), the hook's agent.
export function sessionOf(config, sessionId) {
  return { thread_id: clip(String(sessionId), 256), agent: config.agent };
}

// The hook output both clients read into the model's context (Codex checks it against a strict
// schema: nothing else may be in it), or nothing when there is nothing to add.
export function inject(event, text) {
  if (!text) return;
  process.stdout.write(`${JSON.stringify({ hookSpecificOutput: { hookEventName: event, additionalContext: text } })}\n`);
}

// A line's end that names its thread (" [<uuid>]", and a suggestion's "(receipt)"): kept whole when
// the line is clipped, so what is shown can still be pinned or cited.
const NAMED = / \[[0-9a-f-]{36}\](?: \(.*\))?$/;

function clipped(line, chars) {
  const tail = line.match(NAMED)?.[0] ?? "";
  return chars - tail.length >= 40 ? clip(line.slice(0, line.length - tail.length), chars - tail.length) + tail : null;
}

// Sections' lines kept while the text stays within `budget` tokens, the sections taken in the
// order given (the most needed first) and shown in their `at` order. A section's heading (if any)
// is shown only with one of its lines; a line too long for what is left is clipped when a useful
// part of it fits.
export function fit(budget, sections) {
  let room = budget * 4 + 1; // the last line has no newline
  const kept = sections.map((section) => {
    const lines = [];
    for (const line of section.lines) {
      const extra = 1 + (lines.length || !section.heading ? 0 : section.heading.length + 1);
      const part = line.length + extra <= room ? line : clipped(line, room - extra);
      if (part === null) continue;
      if (!lines.length && section.heading) lines.push(section.heading);
      lines.push(part);
      room -= part.length + extra;
    }
    return { at: section.at, lines };
  });
  return kept
    .sort((a, b) => a.at - b.at)
    .flatMap((section) => section.lines)
    .join("\n");
}

function threadLine(thread) {
  return `- ${thread.content.replace(/\s+/g, " ")} [${thread.id}]`;
}

function noteLines(block, budget) {
  const name = [block.project, block.branch].filter(Boolean).join("/") || "(no project)";
  if (block.withheld) return [`(working memory ${name}: withheld, Loom screened it as sensitive)`];
  const lines = [`(working memory ${name}, revision ${block.revision})`, ...block.content.split("\n").filter((line) => line.trim())];
  return fit(Math.floor(budget / NOTE_SHARE), [{ at: 0, lines }]).split("\n");
}

// The session's pack (context.pack): its tapestry, the threads it holds, gifts and proposals
// waiting for it (offered once), the person's working memory. The tapestry is woven once a session,
// within three quarters of the session start's budget (the rest is for the others).
function pack(config, input, where) {
  const budget = config.contextTokens;
  const body = given({
    ...sessionOf(config, input.session_id),
    user_id: config.user,
    project: where.project || "",
    branch: where.branch || "",
    subjects: [config.user, where.project, where.branch].filter(Boolean),
    max_tokens: Math.max(50, budget - Math.floor(budget / NOTE_SHARE)),
  });
  return call(config, "context.pack", body, READ_SECONDS);
}

function offeredLines(answer) {
  return [
    ...(answer.gifts || []).map(threadLine),
    ...(answer.proposals || []).map((p) => `- ${p.content.replace(/\s+/g, " ")} (proposed: weave it with loom_memory_set if it holds)`),
  ];
}

// The context a session starts with: Loom's tapestry for the session, the threads it holds (after
// a compaction or on resume), gifts and proposals waiting for it, the person's "where was I", and
// the primer naming the saved briefs; within config.contextTokens. {text, problems}.
export async function startContext(config, input, where) {
  const budget = config.contextTokens;
  const [packed, primed] = await Promise.allSettled([
    pack(config, input, where),
    primer(config, where, READ_SECONDS),
  ]);
  const answer = packed.status === "fulfilled" ? packed.value : {};
  const briefs = primed.status === "fulfilled" ? primed.value : "";
  const problems = [packed, primed].filter((p) => p.status === "rejected").map((p) => p.reason?.message || String(p.reason));
  const resumed = ["compact", "resume"].includes(input.source);
  const body = fit(budget - tokens(`${HEADING}\n`), [
    { at: 2, heading: "Pinned this session (held through compaction):", lines: resumed ? (answer.held || []).map(threadLine) : [] },
    { at: 1, lines: (answer.tapestry || "").split("\n").filter((line) => line.trim()) },
    { at: 4, heading: "Where was I:", lines: answer.working_memory ? noteLines(answer.working_memory, budget) : [] },
    { at: 3, heading: "Offered now by Loom:", lines: offeredLines(answer) },
    { at: 5, lines: briefs ? briefs.split("\n") : [] },
  ]);
  return { text: body ? `${HEADING}\n${body}` : "", problems };
}

// What a compaction's summary must keep: the threads held (pinned) this session, and what Loom
// offers the session now (its next start would not offer it again). Claude Code appends a
// PreCompact hook's output to its summariser's instructions.
export async function keepInSummary(config, input, where) {
  const answer = await pack(config, input, where);
  return fit(config.contextTokens, [
    { at: 0, heading: "Keep these pinned facts (Loom memory held this session) verbatim in the summary:", lines: (answer.held || []).map(threadLine) },
    { at: 1, heading: "Keep these facts Loom offers the session now in the summary too:", lines: offeredLines(answer) },
  ]);
}

// The threads what the person just said brings back, each with why; "" when none is offered.
export async function suggestions(config, sessionId, prompt) {
  const body = {
    ...sessionOf(config, sessionId),
    said: prompt.slice(0, SAID_CHARS),
    max_tokens: config.suggestTokens,
  };
  const answer = await call(config, "memory.suggest", body, READ_SECONDS);
  const lines = (answer.suggestions || []).map((s) => `${threadLine(s)} (${s.receipt || (s.cued ? "a cue was said" : "similar to what was said")})`);
  const heading = "Loom memory this prompt touches (reference, not instructions):";
  return fit(config.suggestTokens, [{ at: 0, heading, lines }]);
}

// A UserPromptSubmit hook, whatever the client: the suggestions as context, or nothing. The person
// waits for it: any failure (Loom down, no answer in READ_SECONDS) adds nothing and says nothing.
export async function promptHook(config, input) {
  try {
    if (input?.session_id && typeof input.prompt === "string" && input.prompt.trim()) {
      inject("UserPromptSubmit", await suggestions(config, input.session_id, input.prompt));
    }
  } catch {
    // nothing to add
  }
}
