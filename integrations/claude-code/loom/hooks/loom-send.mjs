#!/usr/bin/env node
// Send what the hooks spooled, then exit: started detached by SessionEnd, whose time is too short
// to wait for Loom. Problems are the next hook's to report (the spool keeps what was not sent).

import { flush, hook, settings } from "../lib/loom.mjs";

hook(async () => {
  await flush(settings());
});
