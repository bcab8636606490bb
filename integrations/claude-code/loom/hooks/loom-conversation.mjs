#!/usr/bin/env node
// Stop: hand the session's new transcript lines to Loom (conversation.ingest), once each (see
// lib/capture.mjs; what Claude Code had not yet written goes at the next Stop or at SessionEnd).

import { flush, hook, hookInput, report, say, sayRecordingOff, settings } from "../lib/loom.mjs";
import { capture } from "../lib/capture.mjs";

hook(async () => {
  const config = settings();
  if (!config.capture) return;
  const input = await hookInput("session_id", "transcript_path");
  if (!input) return;
  let captured;
  try {
    captured = capture(config, String(input.session_id), input.transcript_path);
  } catch (error) {
    return say(`cannot read the transcript ${input.transcript_path}: ${error.code || error.message}`);
  }
  if (captured.off) return sayRecordingOff(config);
  const { problems } = await flush(config);
  sayRecordingOff(config);
  report(problems);
});
