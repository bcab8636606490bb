// What a coding client's session-lifecycle hooks ask of Loom, whatever the client: the primer a
// session starts with (names and dates, never contents), the requests that save the brief of a
// line of work and its "where was I" note, and those that end a session (its turns to extraction,
// its tool actions to episodes). The client's hooks turn their transcript into events and messages.

import { call } from "./http.mjs";
import { clip } from "./loom.mjs";
import { whereWasI } from "./transcript.mjs";

const MESSAGES_MAX = 500; // memory.set_from_messages takes at most this many at once

export function given(body) {
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== null && value !== undefined));
}

function day(moment) {
  return String(moment).replace("T", " ").slice(0, 16);
}

// How the agent loads a brief the primer names, in its client's words: Claude Code has the plugin's
// skill, Codex (and any other client) Loom's MCP tool.
const LOAD_A_BRIEF = {
  "claude-code": "use the loom-session skill to load it",
  codex: "load it with Loom's loom_brief_get MCP tool (the name above as brief_key)",
};

// The primer: this project's saved briefs and working memory, by name and date (each call given
// up after `seconds`).
export async function primer(config, where, seconds) {
  const scope = given({ project: where.project, limit: 10 });
  const [briefs, blocks] = await Promise.all([
    call(config, "session.brief_list", scope, seconds),
    call(config, "working_memory.list", given({ ...scope, user_id: config.user }), seconds),
  ]);
  const lines = [];
  for (const brief of briefs.briefs) lines.push(`- brief ${brief.brief_key} (updated ${day(brief.updated_at)})`);
  for (const block of blocks.blocks) {
    const name = [block.project, block.branch].filter(Boolean).join("/") || "(no project)";
    lines.push(`- working memory ${name} (revision ${block.revision}, ${day(block.updated_at)})`);
  }
  if (!lines.length) return "";
  const heading = `Loom keeps saved state for ${where.project ? `project ${where.project}` : "this namespace"}:`;
  const how = `No brief is loaded. When the person asks to resume one, ${LOAD_A_BRIEF[config.client] || LOAD_A_BRIEF.codex}.`;
  return [heading, ...lines, how].join("\n");
}

// A brief save of the events since the last one (the key left empty: auto/<project>/<branch>;
// `cursor` makes a repeat a no-op) and the "where was I" note; none without events.
export function saveRequests(config, { sessionId, where, events, cursor }) {
  if (!events.length) return [];
  const brief = {
    brief_key: "",
    project: where.project,
    branch: where.branch,
    session_id: sessionId,
    events,
    event_cursor: `${clip(sessionId, 200)}:${cursor}`,
    deterministic_fallback: true, // zero model tokens on the client; without a model, the builder
    wait_seconds: 0,
  };
  const note = {
    project: where.project || "",
    branch: where.branch || "",
    user_id: config.user,
    content: whereWasI(events, { ...where, sessionId }),
    session_id: sessionId,
  };
  return [
    { op: "session.brief_save", body: given(brief) },
    { op: "working_memory.set", body: given(note) },
  ];
}

// The end of a session: its new turns to extraction (defer) and its tool actions to episodes.
export function endRequests(config, { sessionId, messages }) {
  const requests = [];
  for (let i = 0; i < messages.length; i += MESSAGES_MAX) {
    const body = { agent: config.agent, thread_id: sessionId, messages: messages.slice(i, i + MESSAGES_MAX), defer: true };
    requests.push({ op: "memory.set_from_messages", body });
  }
  requests.push({ op: "observe.crystallize", body: { agent: config.agent, session_id: sessionId } });
  return requests;
}
