// Installs the real peers forkloop is compared with (../peers/package.json: the Claude Agent SDK
// with its platform package, which carries the Claude Code binary, and the Claude Code CLI) into
// ../peers/node_modules — ignored by git, never committed or copied into the repository. The
// install is cached: it is redone only when the lockfile (which pins every version) changes, and
// npm's own cache makes a fresh checkout's install a local copy. Run by the root `pretest` script
// and by the conformance tests themselves (one process installs, the others wait for its lock).
// Install scripts are not run: the harness starts the platform packages' binaries directly.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const PEERS_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "peers");
const STAMP = join(PEERS_DIR, "node_modules", ".conformance-peers-stamp");
const LOCK_DIR = join(PEERS_DIR, ".installing");
/** A lock older than this is left over from a killed install. */
const STALE_LOCK_MS = 10 * 60_000;

function lockDigest() {
  return createHash("sha256")
    .update(readFileSync(join(PEERS_DIR, "package-lock.json")))
    .digest("hex");
}

function installed(digest) {
  return existsSync(STAMP) && readFileSync(STAMP, "utf8") === digest;
}

function takeLock() {
  for (;;) {
    try {
      mkdirSync(LOCK_DIR);
      return;
    } catch (error) {
      if (error.code !== "EEXIST") throw error;
      if (Date.now() - statSync(LOCK_DIR).mtimeMs > STALE_LOCK_MS)
        rmSync(LOCK_DIR, { recursive: true, force: true });
      else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
    }
  }
}

/** Installs the pinned peers unless the same lockfile's install is already there. */
export function ensurePeers({ quiet = false } = {}) {
  const digest = lockDigest();
  if (installed(digest)) return;
  takeLock();
  try {
    if (installed(digest)) return; // another process finished it while this one waited
    execFileSync("npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], {
      cwd: PEERS_DIR,
      stdio: quiet ? "ignore" : "inherit",
    });
    writeFileSync(STAMP, digest);
  } finally {
    rmSync(LOCK_DIR, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) ensurePeers();
