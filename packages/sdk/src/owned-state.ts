import { appendFileSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { isInside, realpathAllowingMissing } from "@forkloop/tools";
import { OptionsError } from "./options-error.js";
import type { ProjectState } from "./state-dirs.js";

/**
 * R-S11: sessions and batches found inside the checkout are used only when they are provably the
 * user's own. A repository can ship `.forkloop/batches/<id>/batch.json` with `bypassPermissions`
 * and a working directory anywhere, or a session to be continued by `run -c`. forkloop writes new
 * state under the user's forkloop directory; when it does create state inside a checkout (a
 * `--state-dir` there) it records the path in the user's forkloop directory, which a checkout
 * cannot write. State under the user's directory or outside the checkout is the user's by where it
 * is; state inside the checkout must be on that record.
 */
const RECORD = "own-state.jsonl";

/** Where the record is: the user's forkloop directory (`FORKLOOP_HOME`, else `~/.forkloop`). */
export function ownStateRecord(state: ProjectState): string {
  return join(state.userDir, RECORD);
}

/** True when `path` (symlinks resolved) is the project's directory or inside it. */
export function isInsideProject(state: ProjectState, path: string): boolean {
  return isInside(realOf(path), realOf(state.projectRoot));
}

/** True when `path` (a session transcript or a batch directory) is inside the checkout and not under the user's forkloop directory. */
export function isInCheckout(state: ProjectState, path: string): boolean {
  return isInsideProject(state, path) && !isInside(realOf(path), realOf(state.userDir));
}

interface OwnStateEntry {
  readonly path: string;
  /** The created entry's identity when it existed at the time (a batch directory): it survives a move. */
  readonly dev?: number;
  readonly ino?: number;
}

/**
 * Notes a session or batch forkloop has just created, when it lies in the checkout: its real path,
 * and its device and inode when it exists already (a batch directory), so the user's own batch is
 * still recognised after its state directory is moved (R-R12); a copy has an inode of its own.
 */
export function recordOwnState(state: ProjectState, path: string): void {
  if (!isInCheckout(state, path)) return;
  const record = ownStateRecord(state);
  const identity = identityOf(path);
  const entry: OwnStateEntry = { path: realOf(path), ...(identity === undefined ? {} : identity) };
  mkdirSync(dirname(record), { recursive: true, mode: 0o700 });
  appendFileSync(record, `${JSON.stringify({ ...entry, at: new Date().toISOString() })}\n`, { mode: 0o600 });
}

/** Whether the user may use the state at `path` (see above): recorded by path, or by identity under the same name. */
export function isOwnState(state: ProjectState, path: string): boolean {
  if (!isInCheckout(state, path)) return true;
  const wanted = realOf(path);
  const identity = identityOf(path);
  let text: string;
  try {
    text = readFileSync(ownStateRecord(state), "utf8");
  } catch {
    return false;
  }
  return text.split("\n").some((line) => {
    let entry: Partial<OwnStateEntry>;
    try {
      entry = JSON.parse(line) as Partial<OwnStateEntry>;
    } catch {
      return false;
    }
    if (entry.path === wanted) return true;
    return (
      identity !== undefined &&
      entry.dev === identity.dev &&
      entry.ino === identity.ino &&
      typeof entry.path === "string" &&
      basename(entry.path) === basename(wanted)
    );
  });
}

function identityOf(path: string): { dev: number; ino: number } | undefined {
  try {
    const stats = statSync(path);
    return { dev: stats.dev, ino: stats.ino };
  } catch {
    return undefined;
  }
}

/** The refusal for state a checkout may have shipped: what, why, and how to use it if it is the user's. */
export function notOwnStateError(
  state: ProjectState,
  what: string,
  path: string,
  destination: string,
): OptionsError {
  return new OptionsError(
    `${what} at ${path} is inside the checkout and forkloop has no record of making it there (${ownStateRecord(state)}), so it is not used: a repository can ship one. If it is yours (an older forkloop kept state in the project), move it to ${destination}/ (\`mv ${path} ${destination}/\`) and use it from there.`,
  );
}

function realOf(path: string): string {
  const resolved = realpathAllowingMissing(resolve(path));
  return resolved.ok ? resolved.path : resolve(path);
}
