// What an agent recalled through Loom's MCP tools, for its session (memory.session_record). The
// MCP server is never told the client's session id; the client's PostToolUse hook is, and sees
// the tool's answer: the memory threads it returned (recalled), a reflection's knots and tensions
// (seen), the thread pinned (held).

import { sessionOf } from "./memory.mjs";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MOST = 100; // memory.session_record's bound on each list

// Loom's tool a client names: Claude Code says mcp__plugin_loom_loom__loom_memory_search, Codex
// mcp__loom__loom_memory_search; the part after the last separator.
export function loomTool(toolName) {
  const tool = String(toolName).split(/__|[./:]/).pop();
  return tool.startsWith("loom_") ? tool : null;
}

// The tool's answer as values: clients hand an MCP answer over as its content blocks (JSON as
// text, one block per list item), as its structured content, or as the JSON itself.
function parsed(response) {
  if (typeof response === "string") {
    try {
      return parsed(JSON.parse(response));
    } catch {
      return null;
    }
  }
  if (Array.isArray(response)) return response.map(parsed);
  if (response && typeof response === "object") {
    if (response.type === "text" && typeof response.text === "string") return parsed(response.text);
    if ("structuredContent" in response) return parsed(response.structuredContent);
    if ("content" in response && Array.isArray(response.content)) return parsed(response.content);
  }
  return response;
}

// The thread ids anywhere in `value` (or, given `keys`, under those keys only).
function idsIn(value, keys = null, out = new Set()) {
  if (typeof value === "string" && UUID.test(value) && !keys) out.add(value.toLowerCase());
  else if (Array.isArray(value)) for (const item of value) idsIn(item, keys, out);
  else if (value && typeof value === "object") {
    for (const [key, inner] of Object.entries(value)) idsIn(inner, keys && !keys.includes(key) ? keys : null, out);
  }
  return out;
}

// The memory.session_record request for a Loom tool's answer, or null (not a Loom tool, nothing
// to record).
export function recordRequest(config, input) {
  const tool = loomTool(input.tool_name);
  if (!tool) return null;
  const answer = parsed(input.tool_response);
  const lists = { recalled: new Set(), seen: new Set(), held: new Set() };
  if (tool === "loom_memory_search") idsIn(answer, null, lists.recalled);
  else if (tool === "loom_search") idsIn(answer, ["memory"], lists.recalled);
  else if (tool === "loom_reflect") {
    idsIn(answer, ["cited", "threads"], lists.recalled);
    idsIn(answer, ["knots", "tensions"], lists.seen);
  } else if (tool === "loom_memory_pin") idsIn(input.tool_input?.thread ?? answer, null, lists.held);
  const body = Object.fromEntries(Object.entries(lists).map(([name, ids]) => [name, [...ids].slice(0, MOST)]));
  if (!body.recalled.length && !body.seen.length && !body.held.length) return null;
  return { op: "memory.session_record", body: { ...sessionOf(config, input.session_id), ...body } };
}
