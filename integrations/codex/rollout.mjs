// Codex's session rollout file ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl: one
// {"timestamp", "type", "payload"} record a line; unknown records are skipped, as Codex does) and
// what the integration makes of it: the pieces handed to conversation.ingest, a brief save's
// events, the messages handed to extraction, and the tool actions recorded as observations.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { clip, digest, readAfter } from "../claude-code/loom/lib/loom.mjs";

const HARNESS = ["<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<permissions"];
const EVENT_CHARS = 4000;

export function codexHome(env = process.env) {
  return env.CODEX_HOME || path.join(env.HOME || os.homedir(), ".codex");
}

// The rollout file of a session: sessions/YYYY/MM/DD (local dates: a resumed session appends to
// its first day's file), else archived_sessions. Without an id, the newest session's.
export function findRollout(id, env = process.env) {
  const home = codexHome(env);
  const found = [];
  const walk = (dir, depth) => {
    let names = [];
    try {
      names = fs.readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const full = path.join(dir, name);
      if (depth > 0) walk(full, depth - 1);
      else if (name.startsWith("rollout-") && name.endsWith(".jsonl") && (!id || name.endsWith(`-${id}.jsonl`))) found.push(full);
    }
  };
  walk(path.join(home, "sessions"), 3);
  walk(path.join(home, "archived_sessions"), 0);
  if (!found.length) return null;
  return found.sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs)[0];
}

export function sessionIdOf(file) {
  const match = /rollout-.*?-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/.exec(file);
  return match ? match[1] : path.basename(file, ".jsonl");
}

// A line of the bare format Codex wrote until mid-2025 (a response item without its wrapper) as
// the record that wraps it now.
function wrapped(line) {
  if (!line || typeof line !== "object" || "payload" in line) return line;
  const items = ["message", "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output", "local_shell_call"];
  return items.includes(line.type) ? { type: "response_item", timestamp: line.timestamp, payload: line } : line;
}

// The complete lines after byte `offset` (line `line` of the file is the next), each with its line
// number, and where the next read starts.
export function readFrom(file, offset, line) {
  const { data, from } = readAfter(file, offset);
  const restart = from !== offset;
  let start = 0;
  let number = restart ? 1 : line;
  const lines = [];
  while (start < data.length) {
    const newline = data.indexOf(10, start);
    if (newline < 0) break;
    const raw = data.subarray(start, newline).toString("utf8").replace(/\r$/, "");
    let record = null;
    try {
      record = wrapped(JSON.parse(raw));
    } catch {
      // not a record
    }
    lines.push({ raw, record, number });
    start = newline + 1;
    number += 1;
  }
  return { lines, end: from + start, next: number, first: restart ? 1 : line };
}

function textOf(payload) {
  const content = Array.isArray(payload?.content) ? payload.content : [];
  return content
    .filter((c) => c && ["input_text", "output_text", "text"].includes(c.type) && typeof c.text === "string")
    .map((c) => c.text.trim())
    .filter(Boolean)
    .join("\n\n");
}

// A record that is a turn of the conversation: {role, text}, or null.
function said(record) {
  const payload = record?.payload;
  if (record?.type !== "response_item" || payload?.type !== "message") return null;
  if (!["user", "assistant"].includes(payload.role) || record.metadata?.compaction_output) return null;
  const kinds = payload.internal_chat_message_metadata_passthrough?.content_item_kinds;
  if (payload.role === "user" && Array.isArray(kinds) && kinds.length && kinds.some((k) => k !== "user.text")) return null;
  const text = textOf(payload);
  if (!text || (payload.role === "user" && HARNESS.some((prefix) => text.startsWith(prefix)))) return null;
  return { role: payload.role, text };
}

// The piece of the file to hand to conversation.ingest: the conversation's lines as written, every
// other line blank (so the file's line numbers, the turns' keys, hold), and the line it starts at.
export function conversationPiece(read) {
  if (!read.lines.some((line) => said(line.record))) return null;
  return { transcript: `${read.lines.map((line) => (said(line.record) ? line.raw : "")).join("\n")}\n`, first: read.first };
}

function parsed(text) {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}

// The files a patch (apply_patch's input) adds, updates or deletes.
function patchedFiles(patch) {
  return [...String(patch).matchAll(/^\*\*\* (?:Add|Update|Delete) File: (.+)$/gm)].map((m) => m[1].trim()).slice(0, 32);
}

function exitCode(output) {
  const text = typeof output === "string" ? output : JSON.stringify(output ?? "");
  const match = /(?:Process exited with code|exit code:?)\s*(-?\d+)/i.exec(text);
  return match ? Number(match[1]) : null;
}

function outputText(output) {
  if (typeof output === "string") return output;
  if (Array.isArray(output)) return output.map((c) => c?.text || "").join("\n");
  return output?.content ?? JSON.stringify(output ?? "");
}

// The tool calls of the read lines with their outcomes: [{id, tool, input, summary, files, error, ts}].
export function actions(read) {
  const calls = new Map();
  for (const { record } of read.lines) {
    const p = record?.payload;
    if (record?.type !== "response_item" || !p) continue;
    if (p.type === "function_call" || p.type === "custom_tool_call") {
      const input = p.type === "function_call" ? parsed(p.arguments) : { patch: p.input };
      const command = input.cmd ?? input.command;
      const files = p.name === "apply_patch" ? patchedFiles(input.patch ?? input.input ?? p.input) : [];
      const what = Array.isArray(command) ? command.join(" ") : command ?? files.join(", ") ?? p.name;
      calls.set(p.call_id, {
        id: p.call_id,
        tool: String(p.name).slice(0, 128),
        input: p.arguments ?? p.input ?? "",
        summary: clip(String(what || p.name).replace(/\s+/g, " ").trim() || p.name, 200),
        files,
        error: null,
        ts: record.timestamp,
      });
    } else if (p.type === "local_shell_call") {
      const command = (p.action?.command || []).join(" ");
      calls.set(p.call_id, { id: p.call_id, tool: "local_shell", input: command, summary: clip(command.replace(/\s+/g, " "), 200) || "local_shell", files: [], error: null, ts: record.timestamp });
    } else if ((p.type === "function_call_output" || p.type === "custom_tool_call_output") && calls.has(p.call_id)) {
      const code = exitCode(p.output);
      if (code !== null && code !== 0) {
        const text = outputText(p.output);
        const tail = text.slice(text.indexOf("Output:") >= 0 ? text.indexOf("Output:") + 7 : 0).trim();
        calls.get(p.call_id).error = clip(`exit ${code}: ${tail}`, 2000);
      }
    }
  }
  return [...calls.values()];
}

// The same actions as observe.record takes them.
export function observations(read) {
  return actions(read).map((a) => ({
    id: clip(String(a.id), 128),
    tool: a.tool,
    input_sha256: digest(typeof a.input === "string" ? a.input : JSON.stringify(a.input)),
    summary: a.summary,
    outcome: a.error ? "error" : "ok",
    files: a.files.map((f) => f.slice(0, 512)),
    ...(a.error ? { error: a.error } : {}),
    ...(typeof a.ts === "string" ? { ts: a.ts } : {}),
  }));
}

// A brief save's events: what was said, run, edited, what failed, and Codex's compaction summary.
export function briefEvents(read) {
  const events = [];
  const byCall = new Map(actions(read).map((a) => [a.id, a]));
  for (const { record } of read.lines) {
    const p = record?.payload;
    const ts = typeof record?.timestamp === "string" ? record.timestamp : undefined;
    if (record?.type === "compacted" && typeof p?.message === "string" && p.message.trim()) {
      events.push({ kind: "summary", text: clip(p.message, 20_000), ts });
      continue;
    }
    const turn = said(record);
    if (turn) {
      events.push({ kind: turn.role, text: clip(turn.text, EVENT_CHARS), ts });
      continue;
    }
    const action = byCall.get(p?.call_id);
    if (!action) continue;
    if (p.type === "function_call" || p.type === "custom_tool_call" || p.type === "local_shell_call") {
      if (action.files.length) for (const file of action.files) events.push({ kind: "edit", text: file, path: clip(file, 1024), tool: action.tool, ts });
      else events.push({ kind: "command", text: action.summary, command: action.summary, tool: action.tool, ts });
    } else if (action.error) {
      events.push({ kind: "error", text: clip(action.error, EVENT_CHARS), tool: action.tool, command: action.summary, ts });
    }
  }
  return events.slice(-4000);
}

// The user's and the assistant's messages, for memory.set_from_messages (msg_id: line<N>, the key
// the captured turns have).
export function messages(read) {
  const out = [];
  for (const { record, number } of read.lines) {
    const turn = said(record);
    if (!turn) continue;
    out.push({ role: turn.role, content: clip(turn.text, 100_000), msg_id: `line${number}`, ...(typeof record.timestamp === "string" ? { ts: record.timestamp } : {}) });
  }
  return out;
}
