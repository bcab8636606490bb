#!/usr/bin/env node
// Stop: hand the session's new transcript lines to Loom (conversation.ingest), once each.
//
// Each Stop reads the complete lines after the last ones handed over, keeps the user and
// assistant entries with text or thinking, and spools them as conversation.ingest requests of at
// most 4 MiB; Loom's worker makes each entry a turn (msg_id: its uuid, so a re-send changes
// nothing). While Loom has said recording is off (cached for a minute), nothing is sent and the
// lines written meanwhile are never sent, not even once recording is back on.

import {
  enqueue,
  flush,
  hook,
  hookInput,
  recordingOffUntil,
  report,
  say,
  sayRecordingOff,
  sessionState,
  settings,
} from "../lib/loom.mjs";
import { conversationLines, readFrom } from "../lib/transcript.mjs";

const REQUEST_BYTES = 4 * 1024 * 1024;

function requests(config, sessionId, lines) {
  const threadId = sessionId.length <= 256 ? sessionId : sessionId.slice(0, 256);
  const body = { agent: config.agent, thread_id: threadId, source: `claude-code ${threadId}`.slice(0, 256) };
  const out = [];
  let chunk = [];
  let size = 0;
  for (const line of lines) {
    const length = Buffer.byteLength(line.raw) + 1;
    if (chunk.length && size + length > REQUEST_BYTES) {
      out.push(chunk);
      chunk = [];
      size = 0;
    }
    chunk.push(line.raw);
    size += length;
  }
  if (chunk.length) out.push(chunk);
  return out.map((raws) => ({ op: "conversation.ingest", body: { ...body, transcript: `${raws.join("\n")}\n` } }));
}

function writtenBefore(line, moment) {
  const at = Date.parse(line.entry?.timestamp ?? "");
  return Number.isFinite(at) && at < moment;
}

hook(async () => {
  const config = settings();
  if (!config.capture) return;
  const input = await hookInput("session_id", "transcript_path");
  if (!input) return;
  const state = sessionState(config, String(input.session_id));
  const known = state.read();
  let read;
  try {
    read = readFrom(input.transcript_path, known.captured || 0);
  } catch (error) {
    return say(`cannot read the transcript ${input.transcript_path}: ${error.code || error.message}`);
  }
  const { lines, end } = conversationLines(read);
  const offUntil = recordingOffUntil(config);
  const off = offUntil !== null && Date.now() < offUntil;
  const kept = off ? [] : lines.filter((line) => offUntil === null || !writtenBefore(line, offUntil));
  if (kept.length) enqueue(config, requests(config, String(input.session_id), kept));
  if (end !== known.captured) state.write({ ...state.read(), captured: end });
  if (off) return sayRecordingOff(config);
  const { problems } = await flush(config);
  sayRecordingOff(config);
  report(problems);
});
