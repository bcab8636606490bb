#!/usr/bin/env node
// Send what the hooks spooled, then exit: started detached by SessionEnd, whose time is too short
// to wait for Loom or for another hook's sending (this waits for it). Problems are the next hook's
// to report (the spool keeps what was not sent).

import { flush, hook, settings } from "../lib/loom.mjs";

hook(async () => {
  await flush(settings(), { wait: true });
});
