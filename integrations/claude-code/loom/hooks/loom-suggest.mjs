#!/usr/bin/env node
// UserPromptSubmit: the memory threads the person's prompt brings back (memory.suggest: a cue
// said, or what was said close enough to a thread), each once a session with why, as context for
// Claude. The person waits for this hook: it asks Loom once and gives up after 2 s, and any
// failure adds nothing and says nothing (an exit status 2 would erase the prompt: it is always 0).

import { readStdin, settings } from "../lib/loom.mjs";
import { promptHook } from "../lib/memory.mjs";

let input = null;
try {
  input = JSON.parse(await readStdin());
} catch {
  // not a hook input: nothing to add
}
await promptHook(settings(), input);
