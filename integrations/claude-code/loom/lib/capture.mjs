// The capture of a session's conversation, shared by the hooks that read the transcript (Stop,
// PreCompact, SessionEnd): the complete lines after the last ones handed over, the user and
// assistant entries with text or thinking, spooled as conversation.ingest requests of at most
// 4 MiB; Loom's worker makes each entry a turn (msg_id: its uuid, so a re-send changes nothing).
// Every hook goes on from the one offset, under the session's lock, so a line is spooled once
// whichever hook reads it.
//
// Claude Code writes its transcript from a queue it flushes every 100 ms and does not flush before
// Stop: a Stop can read the file without the session's last lines, which only SessionEnd (and
// PreCompact, before a compaction) is sure to find written.
//
// While Loom has said recording is off (cached for a minute), nothing is spooled and the lines
// written meanwhile are never sent, not even once recording is back on.

import { enqueue, recordingOffUntil, sessionState, withSessionLock } from "./loom.mjs";
import { conversationLines, readFrom } from "./transcript.mjs";

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

// Spool the session's new conversation lines and move its offset past them. Returns {off}: whether
// Loom's cached verdict says recording is off. Throws when the transcript cannot be read.
export function capture(config, sessionId, transcriptPath) {
  return withSessionLock(config, sessionId, () => {
    const state = sessionState(config, sessionId);
    const known = state.read();
    const { lines, end } = conversationLines(readFrom(transcriptPath, known.captured || 0));
    const offUntil = recordingOffUntil(config);
    const off = offUntil !== null && Date.now() < offUntil;
    const kept = off ? [] : lines.filter((line) => offUntil === null || !writtenBefore(line, offUntil));
    if (kept.length) enqueue(config, requests(config, sessionId, kept));
    if (end !== known.captured) state.write({ ...state.read(), captured: end });
    return { off };
  });
}
