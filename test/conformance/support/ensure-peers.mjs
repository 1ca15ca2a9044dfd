// Installs the real peers forkloop is compared with (../peers/package.json: the Claude Agent SDK
// with its platform package, which carries the Claude Code binary, and the Claude Code CLI) into
// ../peers/node_modules — ignored by git, never committed or copied into the repository — and,
// apart, the newest @anthropic-ai/sdk (../newest-sdk/: its tool runner is driven against the
// simulator while the project pins an older one; a directory of its own, so moving it to a newer
// release does not reinstall the peers). Each install is cached: it is redone only when its
// lockfile (which pins every version) changes, and npm's own cache makes a fresh checkout's
// install a local copy. Run by the root `pretest` script and by the tests themselves (one process
// installs, the others wait for its lock). Install scripts are not run: the harness starts the
// platform packages' binaries directly.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const CONFORMANCE_DIR = join(dirname(fileURLToPath(import.meta.url)), "..");
export const PEERS_DIR = join(CONFORMANCE_DIR, "peers");
export const NEWEST_SDK_DIR = join(CONFORMANCE_DIR, "newest-sdk");
/** A lock older than this is left over from a killed install. */
const STALE_LOCK_MS = 10 * 60_000;

function lockDigest(dir) {
  return createHash("sha256")
    .update(readFileSync(join(dir, "package-lock.json")))
    .digest("hex");
}

function installed(stamp, digest) {
  return existsSync(stamp) && readFileSync(stamp, "utf8") === digest;
}

function takeLock(lockDir) {
  for (;;) {
    try {
      mkdirSync(lockDir);
      return;
    } catch (error) {
      if (error.code !== "EEXIST") throw error;
      if (Date.now() - statSync(lockDir).mtimeMs > STALE_LOCK_MS)
        rmSync(lockDir, { recursive: true, force: true });
      else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
    }
  }
}

/** Installs a pinned directory's packages unless the same lockfile's install is already there. */
function ensurePinned(dir, { quiet = false } = {}) {
  const stamp = join(dir, "node_modules", ".conformance-peers-stamp");
  const lockDir = join(dir, ".installing");
  const digest = lockDigest(dir);
  if (installed(stamp, digest)) return;
  takeLock(lockDir);
  try {
    if (installed(stamp, digest)) return; // another process finished it while this one waited
    execFileSync("npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], {
      cwd: dir,
      stdio: quiet ? "ignore" : "inherit",
    });
    writeFileSync(stamp, digest);
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}

/** Installs the pinned peers unless the same lockfile's install is already there. */
export function ensurePeers(options = {}) {
  ensurePinned(PEERS_DIR, options);
}

/** Installs the newest @anthropic-ai/sdk (../newest-sdk) unless it is already there. */
export function ensureNewestSdk(options = {}) {
  ensurePinned(NEWEST_SDK_DIR, options);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  ensurePeers();
  ensureNewestSdk();
}
