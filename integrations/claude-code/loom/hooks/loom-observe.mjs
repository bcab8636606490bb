#!/usr/bin/env node
// PostToolUse: the tool action as an observation (observe.record): the tool, a sha256 of its
// input, one line of what it did (the command, or the file), the outcome, the files it touched
// and the error. Loom screens it; the session's actions become Episodic memories at its end. After
// one of Loom's own MCP tools it also records in the session what the agent recalled, saw or
// pinned through it (lib/recall.mjs: memory.session_record).

import {
  digest,
  enqueue,
  flush,
  hook,
  hookInput,
  report,
  say,
  sessionState,
  settings,
} from "../lib/loom.mjs";
import { gitState } from "../lib/git.mjs";
import { recordRequest } from "../lib/recall.mjs";
import { actionLine, filesOf } from "../lib/transcript.mjs";

function failure(response) {
  if (response && typeof response === "object") {
    if (response.is_error || response.error) return String(response.error || response.stderr || "failed");
    if (response.interrupted) return "interrupted";
  }
  return null;
}

hook(async () => {
  const config = settings();
  const input = await hookInput("session_id", "tool_name");
  if (!input) return;
  const state = sessionState(config, String(input.session_id));
  const known = state.read();
  const where = known.where || gitState(input.cwd);
  if (!known.where) state.write({ ...known, where });
  const toolInput = input.tool_input && typeof input.tool_input === "object" ? input.tool_input : {};
  const error = failure(input.tool_response);
  const action = {
    tool: String(input.tool_name).slice(0, 128),
    input_sha256: digest(JSON.stringify(toolInput)),
    summary: actionLine(String(input.tool_name), toolInput),
    outcome: error === null ? "ok" : "error",
    files: filesOf(toolInput).map((f) => f.slice(0, 512)),
    ts: new Date().toISOString(),
    ...(input.tool_use_id ? { id: String(input.tool_use_id).slice(0, 128) } : {}),
    ...(error === null ? {} : { error: error.slice(0, 2000) }),
  };
  const body = {
    agent: config.agent,
    session_id: String(input.session_id).slice(0, 256),
    actions: [action],
    ...(where.project ? { project: where.project } : {}),
    ...(where.branch ? { branch: where.branch } : {}),
    ...(config.user ? { user_id: config.user } : {}),
  };
  const recorded = recordRequest(config, input);
  enqueue(config, [{ op: "observe.record", body }, ...(recorded ? [recorded] : [])]);
  report((await flush(config)).problems);
});
