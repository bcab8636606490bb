#!/usr/bin/env node
// SessionStart, PreCompact and SessionEnd.
//
// SessionStart prints the primer Claude reads: the names and dates of this project's saved briefs
// and working memory, never their contents (the person loads one with the loom-session skill).
// PreCompact and SessionEnd save the brief of this line of work from the transcript's events since
// the last save (session.brief_save, the key left empty: auto/<project>/<branch> from the git
// state of the session's directory; event_cursor, so a repeated hook writes nothing) and write the
// "where was I" note (working_memory.set). SessionEnd also hands the session's new turns to
// extraction (memory.set_from_messages, defer) and its tool actions to observe.crystallize. Its
// time is short (1.5 s): it spools and leaves the sending to a detached loom-send.mjs.

import path from "node:path";
import { fileURLToPath } from "node:url";

import {
  call,
  clip,
  enqueue,
  flush,
  gitState,
  hook,
  readStdin,
  report,
  say,
  sendLater,
  sessionState,
  settings,
} from "../lib/loom.mjs";
import { briefEvents, messages, readFrom, whereWasI } from "../lib/transcript.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const MESSAGES_MAX = 500; // memory.set_from_messages takes at most this many at once

function given(body) {
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== null && value !== undefined));
}

function day(moment) {
  return String(moment).replace("T", " ").slice(0, 16);
}

async function primer(config, where) {
  const scope = given({ project: where.project, limit: 10 });
  const [briefs, blocks] = await Promise.all([
    call(config, "session.brief_list", scope),
    call(config, "working_memory.list", given({ ...scope, user_id: config.user })),
  ]);
  const lines = [];
  for (const brief of briefs.briefs) lines.push(`- brief ${brief.brief_key} (updated ${day(brief.updated_at)})`);
  for (const block of blocks.blocks) {
    const name = [block.project, block.branch].filter(Boolean).join("/") || "(no project)";
    lines.push(`- working memory ${name} (revision ${block.revision}, ${day(block.updated_at)})`);
  }
  if (!lines.length) return "";
  const heading = `Loom keeps saved state for ${where.project ? `project ${where.project}` : "this namespace"}:`;
  const how = "Nothing is loaded. When the person asks to resume one, use the loom-session skill to load it.";
  return [heading, ...lines, how].join("\n");
}

function saves(config, input, where, known, end) {
  const sessionId = String(input.session_id).slice(0, 256);
  const read = readFrom(input.transcript_path, known.briefed || 0);
  const events = briefEvents(read);
  const requests = [];
  if (events.length) {
    const body = {
      brief_key: "",
      project: where.project,
      branch: where.branch,
      session_id: sessionId,
      events,
      event_cursor: `${clip(sessionId, 200)}:${read.end}`,
      deterministic_fallback: true, // zero model tokens on the client; without a model, the builder
      wait_seconds: 0,
    };
    requests.push({ op: "session.brief_save", body: given(body) });
    const note = whereWasI(events, { ...where, sessionId });
    const block = { project: where.project || "", branch: where.branch || "", user_id: config.user };
    requests.push({ op: "working_memory.set", body: given({ ...block, content: note, session_id: sessionId }) });
  }
  const state = { briefed: read.end };
  if (end) {
    const said = messages(readFrom(input.transcript_path, known.extracted || 0));
    for (let i = 0; i < said.length; i += MESSAGES_MAX) {
      const body = { agent: config.agent, thread_id: sessionId, messages: said.slice(i, i + MESSAGES_MAX), defer: true };
      requests.push({ op: "memory.set_from_messages", body });
    }
    requests.push({ op: "observe.crystallize", body: { agent: config.agent, session_id: sessionId } });
    state.extracted = read.end;
  }
  return { requests, state };
}

hook(async () => {
  const config = settings();
  let input;
  try {
    input = JSON.parse(await readStdin());
  } catch {
    return say("hook input is not JSON");
  }
  const event = input?.hook_event_name;
  if (!input?.session_id) return say("hook input has no session_id");
  const state = sessionState(config, String(input.session_id));
  const known = state.read();
  const where = gitState(input.cwd);
  if (event === "SessionStart") {
    state.write({ ...known, where });
    const { problems } = await flush(config, { deadline: Date.now() + 3000 });
    try {
      const text = await primer(config, where);
      if (text) process.stdout.write(`${text}\n`);
    } catch (error) {
      problems.push(error.message);
    }
    return report(problems);
  }
  if (event !== "PreCompact" && event !== "SessionEnd") return say(`not a hook of this script: ${event}`);
  if (!input.transcript_path) return say("hook input has no transcript_path");
  let planned;
  try {
    planned = saves(config, input, where, known, event === "SessionEnd");
  } catch (error) {
    return say(`cannot read the transcript ${input.transcript_path}: ${error.code || error.message}`);
  }
  enqueue(config, planned.requests);
  state.write({ ...state.read(), where, ...planned.state });
  if (event === "SessionEnd") return sendLater(ROOT);
  report((await flush(config)).problems);
});
