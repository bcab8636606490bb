// What every hook of the Loom plugin shares: its settings (from the environment), its state
// directory, the spool every request to Loom goes through (sent by ./http.mjs), and the recording
// verdict (the git state of a session's directory is ./git.mjs). Node 18 or newer, no dependencies.
//
// A hook never breaks nor slows the client: a call to Loom times out after CALL_SECONDS, a hook
// run stops sending after RUN_SECONDS, every failure is at most one line on stderr, and the exit
// status is always 0. A request is written to the spool before it is sent and leaves it once
// Loom has answered it, so what a hook could not send (Loom down, a hook killed) goes at a later
// run, in order, exactly once (a request sent twice is answered "duplicate" or changes nothing).

import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { call } from "./http.mjs";

export const RUN_SECONDS = 10;
// A cached "recording is off" holds this long: turning recording on is noticed within a minute.
export const VERDICT_SECONDS = 60;
// Answers that say a request will never be taken as it is: set aside, and the spool goes on. A
// 422 that names the namespace or agent points at the setup instead: the spool waits for it.
const REFUSED = new Set([400, 404, 409, 413, 422]);
const SETUP_FIELDS = new Set(["namespace", "agent"]);

function refused(error) {
  return REFUSED.has(error.status) && !(error.status === 422 && SETUP_FIELDS.has(error.field));
}

// The settings of a client's hooks (`client`: its name, the default agent, and its state's folder).
export function settings(env = process.env, client = "claude-code") {
  const url = (env.LOOM_URL || "http://127.0.0.1:7777").replace(/\/+$/, "");
  const namespace = env.LOOM_NAMESPACE || null;
  const home = env.HOME || os.homedir();
  const off = ["0", "false", "no", "off"];
  const data = client === "claude-code" ? env.CLAUDE_PLUGIN_DATA : null;
  return {
    client,
    url,
    token: env.LOOM_TOKEN || "",
    namespace,
    agent: env.LOOM_AGENT || client,
    user: env.LOOM_USER || null,
    capture: !off.includes((env.LOOM_CAPTURE_CONVERSATIONS || "true").trim().toLowerCase()),
    // The tokens (ceil(characters / 4), Loom's rule) a session start and a prompt may add to the
    // agent's context, within the bounds context.pack and memory.suggest take.
    contextTokens: bounded(env.LOOM_CONTEXT_TOKENS, 1000, 50, 8000),
    suggestTokens: bounded(env.LOOM_SUGGEST_TOKENS, 400, 20, 4000),
    // Offsets, verdicts and the spool belong to one Loom URL and namespace.
    state: path.join(
      env.LOOM_HOOK_STATE_DIR || data || path.join(home, ".cache", "loom", client),
      digest(`${url}\n${namespace || ""}`).slice(0, 16),
    ),
  };
}

// A whole number setting within [low, high]; the default when unset or not a number.
function bounded(value, fallback, low, high) {
  const number = Number.parseInt(value ?? "", 10);
  return Number.isFinite(number) ? Math.min(high, Math.max(low, number)) : fallback;
}

export function digest(text) {
  return createHash("sha256").update(text).digest("hex");
}

// --- files ---------------------------------------------------------------------------------------

export function readJson(file, fallback) {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8"));
  } catch {
    return fallback;
  }
}

// Written then renamed: a hook killed mid-write leaves no half file.
export function writeJson(file, value) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const part = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.part`;
  fs.writeFileSync(part, JSON.stringify(value));
  fs.renameSync(part, file);
}

// The bytes of a file after `offset` (a file now shorter than that was replaced: all of it), and
// the offset they start at. Only what is new is read, however long the session grew.
export function readAfter(file, offset) {
  const fd = fs.openSync(file, "r");
  try {
    const size = fs.fstatSync(fd).size;
    const from = offset > size ? 0 : offset;
    const data = Buffer.alloc(size - from);
    let read = 0;
    while (read < data.length) {
      const n = fs.readSync(fd, data, read, data.length - read, from + read);
      if (n === 0) break;
      read += n;
    }
    return { data: data.subarray(0, read), from };
  } finally {
    fs.closeSync(fd);
  }
}

// A session id as a file name (an odd one by its digest).
export function safe(id) {
  return /^[A-Za-z0-9_-]{1,100}$/.test(id) ? id : digest(id).slice(0, 32);
}

// The per-session state: the transcript offsets each hook has handed over up to.
export function sessionState(config, sessionId) {
  const file = path.join(config.state, `session-${safe(sessionId)}.json`);
  return {
    read: () => readJson(file, {}),
    write: (value) => writeJson(file, value),
  };
}

// `body()` while holding the session's lock, so one run at a time reads from its offsets and
// moves them (Codex runs notify and SessionEnd at once: both would read the same lines). A lock
// file made exclusively, taken over once older than a run (its holder was killed); after
// LOCK_WAIT_MS the run goes on without it: a line read twice is only a duplicate Loom ignores.
const LOCK_WAIT_MS = 1000;

export function withSessionLock(config, sessionId, body) {
  const file = path.join(config.state, `session-${safe(sessionId)}.lock`);
  fs.mkdirSync(config.state, { recursive: true });
  const until = Date.now() + LOCK_WAIT_MS;
  let held = false;
  while (!held && Date.now() < until) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: "wx" });
      held = true;
    } catch (error) {
      if (error.code !== "EEXIST") throw error;
      try {
        if (Date.now() - fs.statSync(file).mtimeMs > RUN_SECONDS * 1000) fs.rmSync(file, { force: true });
      } catch {
        // released meanwhile
      }
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
  }
  try {
    return body();
  } finally {
    if (held) fs.rmSync(file, { force: true });
  }
}

export async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

// The hook's JSON input on stdin, holding `fields`; else null, said in one line.
export async function hookInput(...fields) {
  let input;
  try {
    input = JSON.parse(await readStdin());
  } catch {
    say("hook input is not JSON");
    return null;
  }
  const missing = fields.filter((field) => !input?.[field]);
  if (!missing.length) return input;
  say(`hook input has no ${missing.join(" and ")}`);
  return null;
}

// --- the spool -----------------------------------------------------------------------------------

function spoolDir(config) {
  return path.join(config.state, "spool");
}

let queued = 0;

// Requests to send, in order: [{op, body}], each a file named so that a sort gives their order
// (the time, then the order within this run).
export function enqueue(config, requests) {
  for (const request of requests) {
    const name = `${String(Date.now()).padStart(15, "0")}-${String(queued++).padStart(6, "0")}-${process.pid}.json`;
    writeJson(path.join(spoolDir(config), name), request);
  }
}

export function spooled(config) {
  try {
    return fs
      .readdirSync(spoolDir(config))
      .filter((name) => name.endsWith(".json"))
      .sort()
      .map((name) => path.join(spoolDir(config), name));
  } catch {
    return [];
  }
}

// One sender at a time per spool, so requests go in order: a lock file made exclusively, taken
// over once it is older than a whole run (its holder was killed).
function lock(config) {
  const file = path.join(spoolDir(config), ".lock");
  fs.mkdirSync(spoolDir(config), { recursive: true });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: "wx" });
      return () => fs.rmSync(file, { force: true });
    } catch {
      try {
        if (Date.now() - fs.statSync(file).mtimeMs > 3 * RUN_SECONDS * 1000) fs.rmSync(file, { force: true });
        else return null;
      } catch {
        return null;
      }
    }
  }
  return null;
}

// Consecutive spooled transcripts of one thread go as one request (up to MERGED_BYTES): Loom
// appends a request's lines in order, while two requests sent at once could be appended in
// either order. [{files, request}] in the spool's order.
const MERGED_BYTES = 4 * 1024 * 1024;

function batches(config) {
  const out = [];
  for (const file of spooled(config)) {
    const request = readJson(file, null);
    const last = out.at(-1);
    const joins =
      request?.op === "conversation.ingest" &&
      last?.request?.op === "conversation.ingest" &&
      last.request.body.thread_id === request.body.thread_id &&
      last.request.body.agent === request.body.agent &&
      Buffer.byteLength(last.request.body.transcript) + Buffer.byteLength(request.body.transcript) <= MERGED_BYTES;
    if (joins) {
      last.files.push(file);
      last.request = { ...last.request, body: { ...last.request.body, transcript: last.request.body.transcript + request.body.transcript } };
    } else {
      out.push({ files: [file], request });
    }
  }
  return out;
}

// Send the spooled requests in order until the run's time is up; each leaves the spool once Loom
// answered it. Returns {problems}: the lines a hook reports. While another run sends, an in-line
// hook leaves it to that run and its own next one; a sender that is the last of a session (`wait`:
// SessionEnd's detached one, `end`) waits for its turn, else what it spooled would wait for the
// next session (Codex runs notify and SessionEnd at once).
export async function flush(config, { deadline = Date.now() + (RUN_SECONDS - 1) * 1000, wait = false } = {}) {
  const problems = [];
  let unlock = lock(config);
  while (!unlock && wait && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    unlock = lock(config);
  }
  if (!unlock) {
    if (wait) problems.push("another run kept the spool busy: what is spooled goes at the next run");
    return { problems };
  }
  try {
    for (const { files, request } of batches(config)) {
      if (Date.now() > deadline) break;
      if (!request || !request.op) {
        problems.push(`a spooled request is not readable (set aside in ${setAside(config, files[0])})`);
        continue;
      }
      let answer;
      try {
        answer = await call(config, request.op, request.body);
      } catch (error) {
        if (refused(error)) {
          const aside = files.map((file) => setAside(config, file));
          problems.push(`${error.message} (request set aside in ${aside[0]})`);
          continue;
        }
        problems.push(error.message);
        break; // Loom is down or refuses the setup: everything waits, in order
      }
      if (answer && answer.reason === "logging_disabled") {
        heardRecordingOff(config);
        // Recording is off: the transcript lines spooled after these are never sent either.
        for (const later of spooled(config)) {
          if (later >= files[0] && readJson(later, {}).op === "conversation.ingest") fs.rmSync(later, { force: true });
        }
        continue;
      }
      if (request.op === "conversation.ingest") heardRecordingOn(config);
      for (const file of files) fs.rmSync(file, { force: true });
    }
  } finally {
    unlock();
  }
  return { problems };
}

function setAside(config, file) {
  const aside = path.join(config.state, "rejected");
  fs.mkdirSync(aside, { recursive: true });
  const target = path.join(aside, path.basename(file));
  fs.renameSync(file, target);
  return target;
}

// A detached sender for what is spooled (a SessionEnd's budget is too short to wait for Loom): the
// node script `script` with `args`, which flushes the spool.
export function sendLater(script, args = []) {
  const child = spawn(process.execPath, [script, ...args], {
    detached: true,
    stdio: "ignore",
    env: process.env,
  });
  child.unref();
}

// --- the recording verdict -----------------------------------------------------------------------

function verdictFile(config) {
  return path.join(config.state, "verdict.json");
}

// When a cached "recording is off" stops holding (ms since the epoch), or null.
export function recordingOffUntil(config) {
  const cached = readJson(verdictFile(config), null);
  return cached && cached.verdict === "logging_disabled" ? cached.at + VERDICT_SECONDS * 1000 : null;
}

function heardRecordingOff(config) {
  const before = readJson(verdictFile(config), {});
  writeJson(verdictFile(config), { verdict: "logging_disabled", at: Date.now(), said: before.said || false });
}

// The one line saying recording is off, once for as long as it stays off.
export function sayRecordingOff(config) {
  const cached = readJson(verdictFile(config), null);
  if (!cached || cached.verdict !== "logging_disabled" || cached.said) return;
  writeJson(verdictFile(config), { ...cached, said: true });
  say(`recording is off for ${config.namespace || "the token's namespace"}`);
}

export function heardRecordingOn(config) {
  fs.rmSync(verdictFile(config), { force: true });
}

// --- output --------------------------------------------------------------------------------------

export function clip(text, chars) {
  return text.length <= chars ? text : `${text.slice(0, chars - 1)}…`;
}

export function say(problem) {
  process.stderr.write(`loom: ${clip(String(problem).replace(/\s+/g, " "), 300)}\n`);
}

// Run a hook's body: every failure is one line on stderr, the exit status 0 (unless the body set
// another), and the run ends by RUN_SECONDS whatever it waits on.
export function hook(body) {
  const timer = setTimeout(() => process.exit(process.exitCode ?? 0), RUN_SECONDS * 1000);
  timer.unref();
  body().catch((error) => say(error?.message || error));
}

export function report(problems) {
  if (problems.length) say(problems[0] + (problems.length > 1 ? ` (and ${problems.length - 1} more)` : ""));
}
