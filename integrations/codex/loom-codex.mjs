#!/usr/bin/env node
// Codex → Loom. Node 18 or newer (Codex ships on npm, so Node is there), no dependencies; it uses
// the Claude Code plugin's client library (../claude-code/loom/lib), so run it from a copy of the
// repository's integrations/ folder.
//
//   loom-codex.mjs notify '<json>'   Codex's `notify` program: after each agent turn, capture the
//                                    session's new lines and its tool actions
//   loom-codex.mjs hook              a Codex hook (JSON on stdin): SessionStart gives the session's
//                                    memory and the primer, UserPromptSubmit the threads the prompt
//                                    brings back, PostToolUse records what Loom's MCP tools recalled,
//                                    Stop captures, PreCompact saves the brief, SessionEnd ends
//   loom-codex.mjs end [SESSION_ID]  what the person runs when no hook says a session ended: capture,
//                                    save the brief, hand the turns to extraction and the actions to
//                                    episodes (the newest session without an id), and wait for Loom
//   loom-codex.mjs send              send what is spooled (started detached by SessionEnd)
//
// Capture, briefs, the memory a session starts with and is offered (lib/memory.mjs) and their
// promises are the Claude Code plugin's: a spool sent in order exactly once, offsets, the recording
// verdict said once, 5 s a call (2 s and no spool for what the agent waits for), 10 s a run, exit 0
// and one line on stderr for any problem (but `end`, which the person runs: exit 1 when something
// was not sent). Codex's compaction cannot be told what to keep: its SessionStart after a
// compaction (source "compact") puts the session's pinned threads back instead.

import { fileURLToPath } from "node:url";

import {
  enqueue,
  flush,
  hook,
  hookInput,
  recordingOffUntil,
  report,
  say,
  sayRecordingOff,
  sendLater,
  sessionState,
  settings,
  withSessionLock,
} from "../claude-code/loom/lib/loom.mjs";
import { gitState } from "../claude-code/loom/lib/git.mjs";
import { inject, promptHook, startContext } from "../claude-code/loom/lib/memory.mjs";
import { recordRequest } from "../claude-code/loom/lib/recall.mjs";
import { endRequests, saveRequests } from "../claude-code/loom/lib/session.mjs";
import {
  briefEvents,
  conversationPiece,
  findRollout,
  messages,
  observations,
  readFrom,
  sessionIdOf,
} from "./rollout.mjs";

const SELF = fileURLToPath(import.meta.url);
const config = settings(process.env, "codex");

// The session's new lines as conversation.ingest and observe.record requests (none while Loom
// said recording is off: those lines are never sent). It and the lifecycle read and move the
// session's offsets under its lock: Codex runs notify and the SessionEnd hook at once.
function capture(sessionId, file, cwd) {
  withSessionLock(config, sessionId, () => captureLocked(sessionId, file, cwd));
}

function captureLocked(sessionId, file, cwd) {
  const state = sessionState(config, sessionId);
  const known = state.read();
  const read = readFrom(file, known.captured || 0, known.capturedLine || 1);
  const where = known.where || gitState(cwd);
  const requests = [];
  const offUntil = recordingOffUntil(config);
  const piece = config.capture ? conversationPiece(read) : null;
  if (piece && !(offUntil !== null && Date.now() < offUntil)) {
    const body = { agent: config.agent, thread_id: sessionId, source: `codex ${sessionId}`.slice(0, 256), transcript: piece.transcript, first_line: piece.first };
    requests.push({ op: "conversation.ingest", body });
  }
  const actions = observations(read);
  for (let i = 0; i < actions.length; i += 200) {
    const body = { agent: config.agent, session_id: sessionId, actions: actions.slice(i, i + 200), ...(where.project ? { project: where.project } : {}), ...(where.branch ? { branch: where.branch } : {}), ...(config.user ? { user_id: config.user } : {}) };
    requests.push({ op: "observe.record", body });
  }
  enqueue(config, requests);
  state.write({ ...state.read(), where, captured: read.end, capturedLine: read.next });
}

// The brief of the line of work since the last save, and at the end the turns and actions.
function lifecycle(sessionId, file, cwd, end) {
  withSessionLock(config, sessionId, () => lifecycleLocked(sessionId, file, cwd, end));
}

function lifecycleLocked(sessionId, file, cwd, end) {
  const state = sessionState(config, sessionId);
  const known = state.read();
  const where = known.where || gitState(cwd);
  const read = readFrom(file, known.briefed || 0, known.briefedLine || 1);
  const requests = saveRequests(config, { sessionId, where, events: briefEvents(read), cursor: read.end });
  const next = { briefed: read.end, briefedLine: read.next };
  if (end) {
    const said = readFrom(file, known.extracted || 0, known.extractedLine || 1);
    requests.push(...endRequests(config, { sessionId, messages: messages(said) }));
    Object.assign(next, { extracted: said.end, extractedLine: said.next });
  }
  enqueue(config, requests);
  state.write({ ...state.read(), where, ...next });
}

async function send(wait = false) {
  const { problems } = await flush(config, { wait });
  sayRecordingOff(config);
  return problems;
}

function located(sessionId, transcriptPath) {
  const file = transcriptPath || findRollout(sessionId);
  if (!file) throw new Error(`no Codex rollout file for session ${sessionId} under ${process.env.CODEX_HOME || "~/.codex"}`);
  return file;
}

const [command, ...args] = process.argv.slice(2);

if (command === "notify") {
  hook(async () => {
    let note;
    try {
      note = JSON.parse(args.at(-1) ?? "");
    } catch {
      return say("the notify argument is not JSON");
    }
    if (note?.type !== "agent-turn-complete" || !note["thread-id"]) return;
    const sessionId = String(note["thread-id"]);
    capture(sessionId, located(sessionId), note.cwd);
    report(await send());
  });
} else if (command === "hook") {
  hook(async () => {
    const input = await hookInput("session_id");
    if (!input) return;
    const sessionId = String(input.session_id);
    const event = input.hook_event_name;
    if (event === "UserPromptSubmit") return promptHook(config, input);
    if (event === "SessionStart") {
      const { problems } = await flush(config, { deadline: Date.now() + 3000 }); // the rest for the pack
      const started = await startContext(config, input, gitState(input.cwd));
      inject("SessionStart", started.text);
      return report([...problems, ...started.problems]);
    }
    if (event === "PostToolUse") {
      // Only Loom's own tools: notify records every tool action from the rollout.
      const recorded = recordRequest(config, input);
      if (recorded) enqueue(config, [recorded]);
      return recorded ? report(await send()) : undefined;
    }
    const file = located(sessionId, input.transcript_path);
    if (event === "Stop") capture(sessionId, file, input.cwd);
    else if (event === "PreCompact") lifecycle(sessionId, file, input.cwd, false);
    else if (event === "SessionEnd") {
      capture(sessionId, file, input.cwd);
      lifecycle(sessionId, file, input.cwd, true);
      return sendLater(SELF, ["send"]); // Codex gives SessionEnd hooks 3 s
    } else return say(`not a hook of this script: ${event}`);
    report(await send());
  });
} else if (command === "end") {
  hook(async () => {
    const file = located(args[0] || null);
    const sessionId = args[0] || sessionIdOf(file);
    capture(sessionId, file, process.cwd());
    lifecycle(sessionId, file, process.cwd(), true);
    const problems = await send(true);
    report(problems);
    if (problems.length) process.exitCode = 1;
    else process.stdout.write(`loom: session ${sessionId} saved\n`);
  });
} else if (command === "send") {
  hook(async () => {
    await flush(config, { wait: true });
  });
} else {
  say("usage: loom-codex.mjs notify JSON | hook | end [SESSION_ID] | send");
  process.exitCode = 2;
}
