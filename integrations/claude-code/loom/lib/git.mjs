// Where a session works: the project and branch of its directory, from git (the name a brief
// and a working memory block are kept under, and the scope of what Loom's memory gives).

import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

import { clip } from "./loom.mjs";

function git(cwd, args) {
  try {
    return execFileSync("git", args, { cwd, timeout: 2000, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return "";
  }
}

// The project (the repository's name, from its remote, else its top directory) and the branch of
// a session's directory; nulls outside a repository.
export function gitState(cwd) {
  if (!cwd || !fs.existsSync(cwd)) return { project: null, branch: null };
  const top = git(cwd, ["rev-parse", "--show-toplevel"]);
  if (!top) return { project: null, branch: null };
  const remote = git(cwd, ["config", "--get", "remote.origin.url"]);
  const fromRemote = remote.replace(/\.git$/, "").split(/[/:]/).filter(Boolean).pop();
  const branch = git(cwd, ["rev-parse", "--abbrev-ref", "HEAD"]);
  return {
    project: clip(fromRemote || path.basename(top), 128),
    branch: branch && branch !== "HEAD" ? clip(branch, 128) : null,
  };
}
