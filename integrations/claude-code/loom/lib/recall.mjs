// What an agent recalled through Loom's MCP tools, for its session (memory.session_record). The
// MCP server is never told the client's session id; the client's PostToolUse hook is, and sees
// the tool's answer: the memory threads it returned (recalled: loom_memory_search, loom_search's
// memory section, the threads loom_reflect cites), those a reflection only showed in its knots and
// tensions (seen), the thread pinned (held: loom_memory_pin), the thread set (woven:
// loom_memory_set).

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

// The thread ids in `value` (or, given `keys`, under those keys only): the strings that are uuids
// held by a key naming threads (a hit's subjects may be uuids too: those are not threads).
const THREAD_KEYS = new Set(["id", "thread", "threads", "cited", "seen", "newer", "older"]);

function idsIn(value, keys = null, out = new Set(), key = null) {
  if (typeof value === "string") {
    if (!keys && (key === null || THREAD_KEYS.has(key)) && UUID.test(value)) out.add(value.toLowerCase());
  } else if (Array.isArray(value)) for (const item of value) idsIn(item, keys, out, key);
  else if (value && typeof value === "object") {
    for (const [inner, held] of Object.entries(value)) idsIn(held, keys && !keys.includes(inner) ? keys : null, out, inner);
  }
  return out;
}

// The memory.session_record request for a Loom tool's answer, or null (not a Loom tool, nothing
// to record).
export function recordRequest(config, input) {
  const tool = loomTool(input.tool_name);
  if (!tool) return null;
  const answer = parsed(input.tool_response);
  const lists = { recalled: new Set(), seen: new Set(), held: new Set(), woven: new Set() };
  if (tool === "loom_memory_search") idsIn(answer, null, lists.recalled);
  else if (tool === "loom_search") idsIn(answer, ["memory"], lists.recalled);
  else if (tool === "loom_reflect") {
    // As memory.reflect records them itself: the cited threads recalled, the others shown seen.
    idsIn(answer, ["cited"], lists.recalled);
    for (const id of idsIn(answer, ["seen", "knots", "tensions"])) if (!lists.recalled.has(id)) lists.seen.add(id);
  } else if (tool === "loom_memory_pin") idsIn(input.tool_input?.thread ?? answer, null, lists.held);
  else if (tool === "loom_memory_set") idsIn(answer, ["id"], lists.woven);
  const body = Object.fromEntries(Object.entries(lists).map(([name, ids]) => [name, [...ids].slice(0, MOST)]));
  if (Object.values(body).every((ids) => !ids.length)) return null;
  return { op: "memory.session_record", body: { ...sessionOf(config, input.session_id), ...body } };
}
