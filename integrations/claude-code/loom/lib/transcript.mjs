// Claude Code's session transcript (JSON lines, one entry a line; its format is internal to Claude
// Code and changes between versions, so unknown entries are skipped) read from a byte offset, and
// what the hooks make of it: the lines handed to conversation.ingest, a brief save's events, the
// messages handed to extraction, and the "where was I" note.

import { clip, readAfter } from "./loom.mjs";

// Entries that are not the conversation proper (Loom's ingest skips them too).
const SKIP_FLAGS = ["isMeta", "isSidechain", "isCompactSummary"];
const EDIT_TOOLS = new Set(["Edit", "MultiEdit", "Write", "NotebookEdit"]);
const READ_TOOLS = new Set(["Read", "NotebookRead"]);
const SEARCH_TOOLS = new Set(["Grep", "Glob", "WebSearch", "WebFetch", "LS"]);
const EVENT_CHARS = 4000;

// The complete lines after byte `offset` as [{raw, entry, start, end}], and the offset to read
// from next. A half-written last line is left for the next read; a line that is not JSON is
// skipped. A file shorter than the offset was replaced: it is read again from the start (Loom
// takes each entry once, by its uuid).
export function readFrom(file, offset) {
  const { data, from } = readAfter(file, offset);
  const lines = [];
  let start = 0;
  while (start < data.length) {
    const newline = data.indexOf(10, start);
    if (newline < 0) break;
    const raw = data.subarray(start, newline).toString("utf8").replace(/\r$/, "");
    try {
      lines.push({ raw, entry: JSON.parse(raw), start: from + start, end: from + newline + 1 });
    } catch {
      // not an entry
    }
    start = newline + 1;
  }
  return { lines, end: from + start };
}

function blocks(entry) {
  const content = entry?.message?.content;
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? content.filter((b) => b && typeof b === "object") : [];
}

function said(entry) {
  return (entry?.type === "user" || entry?.type === "assistant") && !SKIP_FLAGS.some((flag) => entry[flag]);
}

// The lines worth handing to conversation.ingest (user and assistant entries with text or
// thinking; tool calls and results never), and the offset they reach. Thinking written in an
// entry of its own waits for the text of its message: trailing text-less assistant entries are
// left for the next read, so Loom sees them together.
export function conversationLines(read) {
  const kept = [];
  for (const line of read.lines) {
    if (!said(line.entry)) continue;
    const kinds = new Set(blocks(line.entry).map((b) => b.type));
    const text = blocks(line.entry).some((b) => b.type === "text" && String(b.text || "").trim());
    if (!text && !kinds.has("thinking")) continue;
    kept.push({ ...line, waiting: line.entry.type === "assistant" && !kinds.has("text") });
  }
  let end = read.end;
  while (kept.length && kept[kept.length - 1].waiting) end = kept.pop().start;
  return { lines: kept, end };
}

// The transcript's text of an entry's text blocks.
function textOf(entry) {
  return blocks(entry)
    .filter((b) => b.type === "text")
    .map((b) => String(b.text || ""))
    .join("\n")
    .trim();
}

function resultText(block) {
  const content = block.content;
  if (typeof content === "string") return content;
  return Array.isArray(content) ? content.map((c) => (c && c.type === "text" ? c.text : "")).join("\n") : "";
}

// What a tool call did, in one line: the command, the file, the pattern, else the tool's name.
export function actionLine(name, input = {}) {
  const what =
    input.command ?? input.file_path ?? input.notebook_path ?? input.path ?? input.pattern ?? input.query ?? input.url ?? "";
  return clip(String(what || name).replace(/\s+/g, " ").trim() || name, 200);
}

export function filesOf(input = {}) {
  return [input.file_path, input.notebook_path].filter((f) => typeof f === "string" && f).slice(0, 32);
}

// A brief save's events from the read lines: what was said, edited, run, read, searched and what
// failed, and the client's own compaction summary.
export function briefEvents(read) {
  const events = [];
  const calls = new Map();
  for (const { entry } of read.lines) {
    const ts = typeof entry?.timestamp === "string" ? entry.timestamp : undefined;
    if (entry?.type === "summary" && typeof entry.summary === "string") {
      events.push({ kind: "summary", text: clip(entry.summary, 20_000), ts });
      continue;
    }
    if (entry?.type === "user" && entry.isCompactSummary) {
      events.push({ kind: "summary", text: clip(textOf(entry), 20_000), ts });
      continue;
    }
    if (!said(entry)) continue;
    const text = textOf(entry);
    if (text && !text.startsWith("<command-") && !text.startsWith("<local-command")) {
      events.push({ kind: entry.type, text: clip(text, EVENT_CHARS), ts });
    }
    for (const block of blocks(entry)) {
      if (block.type === "tool_use") {
        calls.set(block.id, block);
        const input = block.input || {};
        const line = actionLine(block.name, input);
        if (EDIT_TOOLS.has(block.name)) events.push({ kind: "edit", text: line, path: clip(line, 1024), tool: block.name, ts });
        else if (block.name === "Bash") events.push({ kind: "command", text: line, command: line, tool: block.name, ts });
        else if (READ_TOOLS.has(block.name)) events.push({ kind: "read", text: line, path: clip(line, 1024), tool: block.name, ts });
        else if (SEARCH_TOOLS.has(block.name)) events.push({ kind: "search", text: line, tool: block.name, ts });
        else events.push({ kind: "tool", text: line, tool: clip(String(block.name), 128), ts });
      } else if (block.type === "tool_result" && block.is_error) {
        const call = calls.get(block.tool_use_id);
        events.push({
          kind: "error",
          text: clip(resultText(block).trim() || "failed", EVENT_CHARS),
          ...(call ? { tool: clip(String(call.name), 128), command: actionLine(call.name, call.input) } : {}),
          ts,
        });
      }
    }
  }
  return events.slice(-4000);
}

// The user and assistant messages of the read lines, for memory.set_from_messages (msg_id: the
// entry's uuid, as the capture's turns have).
export function messages(read) {
  const out = [];
  for (const { entry } of read.lines) {
    if (!said(entry) || typeof entry.uuid !== "string") continue;
    const text = textOf(entry);
    if (!text || text.startsWith("<command-") || text.startsWith("<local-command")) continue;
    out.push({
      role: entry.type,
      content: clip(text, 100_000),
      msg_id: clip(entry.uuid, 128),
      ...(typeof entry.timestamp === "string" ? { ts: entry.timestamp } : {}),
    });
  }
  return out;
}

// The "where was I" note of a session, from its events, at most 4,000 characters.
export function whereWasI(events, { project, branch, sessionId }) {
  const last = (kind) => events.filter((e) => e.kind === kind).at(-1);
  const files = [...new Set(events.filter((e) => e.kind === "edit").map((e) => e.text))].slice(-8);
  const commands = events.filter((e) => e.kind === "command").slice(-3).map((e) => `\`${e.text}\``);
  const lines = [`Where was I: ${[project, branch].filter(Boolean).join("/") || "this directory"} (session ${sessionId})`];
  const asked = last("user");
  if (asked) lines.push(`- Last asked: ${clip(asked.text.replace(/\s+/g, " "), 400)}`);
  if (files.length) lines.push(`- Editing: ${files.join(", ")}`);
  if (commands.length) lines.push(`- Last commands: ${commands.join(", ")}`);
  const error = last("error");
  if (error) lines.push(`- Last error: ${clip(error.text.replace(/\s+/g, " "), 400)}`);
  const answer = last("assistant");
  if (answer) lines.push(`- Last answer: ${clip(answer.text.replace(/\s+/g, " "), 600)}`);
  return clip(lines.join("\n"), 4000);
}
