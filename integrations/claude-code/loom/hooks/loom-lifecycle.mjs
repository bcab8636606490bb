#!/usr/bin/env node
// SessionStart, PreCompact and SessionEnd.
//
// SessionStart gives Claude the session's memory (lib/memory.mjs: the tapestry, the threads held
// through a compaction, the "where was I" note) and the primer: the names and dates of this
// project's saved briefs, never their contents (the person loads one with the loom-session skill).
// PreCompact tells Claude Code's summariser the pinned facts to keep (its stdout is appended to the
// summariser's instructions). PreCompact and SessionEnd first capture the session's new
// conversation lines as Stop does (the one capture of lib/capture.mjs, from the same offset:
// Claude Code may have written the last lines after the last Stop read the file). Then they save the brief of this line of work from the
// transcript's events since the last save (session.brief_save, the key left empty:
// auto/<project>/<branch> from the git state of the session's directory; event_cursor, so a
// repeated hook writes nothing) and write the "where was I" note (working_memory.set). SessionEnd
// also hands the session's new turns to extraction (memory.set_from_messages, defer) and its tool
// actions to observe.crystallize. Its time is short (1.5 s): it spools and leaves the sending to a
// detached loom-send.mjs.

import path from "node:path";
import { fileURLToPath } from "node:url";

import {
  enqueue,
  flush,
  hook,
  hookInput,
  report,
  say,
  sayRecordingOff,
  sendLater,
  sessionState,
  settings,
} from "../lib/loom.mjs";
import { gitState } from "../lib/git.mjs";
import { capture } from "../lib/capture.mjs";
import { inject, keepInSummary, startContext } from "../lib/memory.mjs";
import { endRequests, saveRequests } from "../lib/session.mjs";
import { briefEvents, messages, readFrom } from "../lib/transcript.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

function plan(config, input, where, known, end) {
  const sessionId = String(input.session_id).slice(0, 256);
  const read = readFrom(input.transcript_path, known.briefed || 0);
  const requests = saveRequests(config, { sessionId, where, events: briefEvents(read), cursor: read.end });
  const state = { briefed: read.end };
  if (end) {
    const said = messages(readFrom(input.transcript_path, known.extracted || 0));
    requests.push(...endRequests(config, { sessionId, messages: said }));
    state.extracted = read.end;
  }
  return { requests, state };
}

hook(async () => {
  const config = settings();
  const input = await hookInput("session_id");
  if (!input) return;
  const event = input.hook_event_name;
  const state = sessionState(config, String(input.session_id));
  const known = state.read();
  const where = gitState(input.cwd);
  if (event === "SessionStart") {
    state.write({ ...known, where });
    const { problems } = await flush(config, { deadline: Date.now() + 3000 });
    const started = await startContext(config, input, where);
    inject("SessionStart", started.text);
    return report([...problems, ...started.problems]);
  }
  if (event !== "PreCompact" && event !== "SessionEnd") return say(`not a hook of this script: ${event}`);
  if (!input.transcript_path) return say("hook input has no transcript_path");
  // Asked first: what the summariser must keep cannot wait for the spool.
  const kept = event === "PreCompact" ? keepInSummary(config, input, where).catch((error) => ({ error })) : null;
  let planned;
  try {
    if (config.capture && capture(config, String(input.session_id), input.transcript_path).off) sayRecordingOff(config);
    planned = plan(config, input, where, known, event === "SessionEnd");
  } catch (error) {
    return say(`cannot read the transcript ${input.transcript_path}: ${error.code || error.message}`);
  }
  enqueue(config, planned.requests);
  state.write({ ...state.read(), where, ...planned.state });
  if (event === "SessionEnd") return sendLater(path.join(ROOT, "hooks", "loom-send.mjs"));
  const keep = await kept;
  if (typeof keep === "string" && keep) process.stdout.write(`${keep}\n`);
  const { problems } = await flush(config);
  if (keep?.error) problems.unshift(keep.error.message);
  sayRecordingOff(config);
  report(problems);
});
