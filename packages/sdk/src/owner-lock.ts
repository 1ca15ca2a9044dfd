import { createHash, randomUUID } from "node:crypto";
import { link, open, readdir, rename, rm } from "node:fs/promises";
import { hostname } from "node:os";
import { dirname, join } from "node:path";
import { judgeOwner, type LockOwner, lockOwnerSchema, type ProcessProbe, procProbe } from "./lock-owner.js";
import { OptionsError } from "./options-error.js";

/**
 * R-R5: one process at a time for a batch or a session — two `--resume`s of one batch run items
 * twice, two of one session corrupt its transcript for good. The lock is a file holding its
 * owner's identity (lock-owner.ts), and every step on it is atomic:
 *
 * - **create**: the identity is written and fsync'd under a unique temporary name, then
 *   `link(2)`ed to the lock's name, which fails with EEXIST when the name is taken — there is no
 *   moment when the lock exists empty or half-written;
 * - **take over** only from an owner proven dead, and only that owner's lock *instance*: the
 *   taker first links its identity to `<lock>.takeover-<instance>` (one taker per instance wins),
 *   then checks that the lock still is that instance and renames its own file over it. Nobody
 *   else can change the lock meanwhile: its owner is dead, and other takers lost the claim.
 *   A claim left by a taker that died in between is taken over the same way;
 * - **release**: the owner removes the lock only while it still holds its own instance.
 */

export interface OwnerLockOptions {
  /** What is locked, for messages: `batch b-1`, `session 1f0…`. */
  readonly what: string;
  /** The command the owner runs, shown to a second process: `forkloop batch --resume b-1`. */
  readonly command: string;
  readonly probe?: ProcessProbe;
  readonly now?: () => Date;
}

export interface HeldLock {
  readonly path: string;
  readonly owner: LockOwner;
  /** Why an earlier owner's lock was taken over, when it was (for a notice). */
  readonly tookOver?: string;
  release(): Promise<void>;
}

/** The lock is held by a live process (or one this host cannot check): exit 2, naming it. */
export class LockHeldError extends OptionsError {
  constructor(
    message: string,
    readonly path: string,
    readonly owner: LockOwner,
  ) {
    super(message);
  }
}

/** A lock file as read: its owner (or none when it is not one of ours), and its instance. */
export interface LockContents {
  readonly owner: LockOwner;
  /** The owner's instance, or for a lock we cannot parse a digest of its bytes and inode. */
  readonly instance: string;
  /** True for a lock that is not a current one (an older forkloop's pid, or garbage). */
  readonly legacy: boolean;
}

const MAX_ROUNDS = 200;

/** Takes the lock at `path` or throws `LockHeldError` naming the owner and the fix. */
export async function acquireOwnerLock(path: string, options: OwnerLockOptions): Promise<HeldLock> {
  const probe = options.probe ?? procProbe;
  const owner: LockOwner = {
    ...probe.self(),
    instance: randomUUID(),
    since: (options.now?.() ?? new Date()).toISOString(),
    command: options.command,
  };
  const mine = `${path}.${owner.instance}.tmp`;
  await writeSynced(mine, `${JSON.stringify(owner)}\n`);
  let tookOver: string | undefined;
  try {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      if (await linkExclusive(mine, path)) return await held(path, owner, probe, tookOver);
      const current = await readLockFile(path);
      if (current === undefined) continue; // released between our link and our read
      const verdict = judgeOwner(current.owner, probe);
      if (verdict.state !== "dead") throw heldError(path, current, verdict, options.what);
      const outcome = await replaceInstance(path, current.instance, mine, probe);
      if (outcome === "replaced") {
        tookOver = `${options.what}: took over the lock of ${describeOwner(current.owner)}, as ${verdict.why}`;
        return await held(path, owner, probe, tookOver);
      }
      // Another taker is at work, or the lock changed under us: look again shortly.
      await pause(round < 10 ? 1 : 10);
    }
  } finally {
    await rm(mine, { force: true });
  }
  throw new OptionsError(
    `${options.what}: could not take the lock ${path}: other processes kept taking it. Run the command again once they are done.`,
  );
}

async function held(
  path: string,
  owner: LockOwner,
  probe: ProcessProbe,
  tookOver: string | undefined,
): Promise<HeldLock> {
  await removeDeadTemporaries(path, probe);
  return {
    path,
    owner,
    ...(tookOver === undefined ? {} : { tookOver }),
    async release() {
      const current = await readLockFile(path).catch(() => undefined);
      if (current?.owner.instance === owner.instance) await rm(path, { force: true });
    },
  };
}

/**
 * Replaces the lock instance `instance` at `target` with a copy of the file `mine`, unless the
 * target has changed or another taker holds the claim on that instance.
 */
async function replaceInstance(
  target: string,
  instance: string,
  mine: string,
  probe: ProcessProbe,
  depth = 0,
): Promise<"replaced" | "changed" | "busy"> {
  const claim = `${target}.takeover-${instance}`;
  if (!(await linkExclusive(mine, claim))) {
    const claimant = await readLockFile(claim);
    if (claimant === undefined) return "busy";
    // A taker that died holding the claim: its claim is taken over like a lock (bounded: each
    // level needs another taker to have died within the few system calls a takeover takes).
    if (depth > 4 || judgeOwner(claimant.owner, probe).state !== "dead") return "busy";
    const outcome = await replaceInstance(claim, claimant.instance, mine, probe, depth + 1);
    if (outcome !== "replaced") return outcome;
  }
  try {
    const current = await readLockFile(target);
    if (current?.instance !== instance) return "changed";
    // A second name for our file, renamed over the dead instance: `mine` stays for other steps.
    const copy = `${target}.${randomUUID()}.tmp`;
    await link(mine, copy);
    await rename(copy, target);
    return "replaced";
  } finally {
    const held = await readLockFile(claim).catch(() => undefined);
    const ours = await readLockFile(mine).catch(() => undefined);
    if (held !== undefined && held.instance === ours?.instance) await rm(claim, { force: true });
  }
}

/** `link(2)`: true when `to` was created, false when it already existed. */
async function linkExclusive(from: string, to: string): Promise<boolean> {
  try {
    await link(from, to);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
}

/**
 * Reads a lock file: undefined when there is none. Contents and inode come from one descriptor,
 * so a lock we cannot parse (an older forkloop's bare pid, garbage) still gets an instance that
 * names exactly the file that was read.
 */
export async function readLockFile(path: string): Promise<LockContents | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    const [text, stats] = await Promise.all([handle.readFile("utf8"), handle.stat()]);
    const parsed = parseOwner(text);
    if (parsed !== undefined) return { owner: parsed, instance: parsed.instance, legacy: false };
    const instance = `legacy-${createHash("sha256")
      .update(`${stats.ino}:${stats.mtimeMs}:${text}`)
      .digest("hex")
      .slice(0, 24)}`;
    const pid = /^\s*(\d+)\s*$/.exec(text)?.[1];
    // An older forkloop's lock holds a bare pid: checked by that pid (and what runs under it).
    // Anything else (empty, garbage) names no owner: a pid above the kernel's limit, so it reads
    // as dead (a current lock is never seen half-written: it appears whole, by link).
    const legacyOwner: LockOwner = {
      instance,
      pid: pid === undefined ? 2 ** 31 - 1 : Number(pid),
      startTime: null,
      host: hostname(),
      bootId: null,
      pidNamespace: null,
      since: stats.mtime.toISOString(),
      command: "an older forkloop",
    };
    return { owner: legacyOwner, instance, legacy: true };
  } finally {
    await handle.close();
  }
}

function parseOwner(text: string): LockOwner | undefined {
  try {
    const parsed = lockOwnerSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function heldError(
  path: string,
  current: LockContents,
  verdict: { state: "alive" } | { state: "unknowable"; where: string },
  what: string,
): LockHeldError {
  const owner = current.owner;
  const self = owner.pid === process.pid && verdict.state === "alive";
  const by = `${what} is in use by ${self ? "this process (another session of this program)" : describeOwner(owner)}`;
  if (self) return new LockHeldError(`${by}; wait for it to end before resuming it again.`, path, owner);
  const message =
    verdict.state === "alive"
      ? `${by}. Wait for it to finish, or stop it (kill ${owner.pid}) and run the command again.`
      : `${by}, ${verdict.where}, which this host cannot check. If it no longer runs there, delete ${path} and run the command again.`;
  return new LockHeldError(message, path, owner);
}

function describeOwner(owner: LockOwner): string {
  return `process ${owner.pid} on ${owner.host} since ${owner.since} (${owner.command})`;
}

async function writeSynced(path: string, text: string): Promise<void> {
  const handle = await open(path, "wx", 0o600);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } catch (error) {
    // A full disk: leave no partial temporary behind, and let the message name the file
    // (a write through a handle carries no path).
    await rm(path, { force: true }).catch(() => undefined);
    const errno = error as NodeJS.ErrnoException;
    if (typeof errno?.code === "string" && errno.path === undefined) errno.path = path;
    throw error;
  } finally {
    await handle.close();
  }
}

/** A lock's temporary: `<lock>.<uuid>.tmp` (acquireOwnerLock, replaceInstance). */
const TEMPORARY = /\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.tmp$/;

/** Directories this process has swept for dead temporaries (see removeDeadTemporaries). */
const swept = new Set<string>();

/**
 * Temporary files (`<lock>.<uuid>.tmp`) left by processes killed mid-way: removed once their owner
 * is dead, best effort (a leftover is a few bytes, never a lock). Claims are not: removing one
 * while another taker replaces it would let two takers hold it. Once per directory and process,
 * for every lock in it: a sessions directory holds a lock and a transcript per session, and
 * listing it at each of 1,000 concurrent sessions' starts made their start quadratic (R-V3).
 */
async function removeDeadTemporaries(path: string, probe: ProcessProbe): Promise<void> {
  const dir = dirname(path);
  if (swept.has(dir)) return;
  swept.add(dir);
  try {
    for (const name of await readdir(dir)) {
      if (!TEMPORARY.test(name) || name.includes(".takeover-")) continue;
      const leftover = join(dir, name);
      const contents = await readLockFile(leftover);
      if (contents !== undefined && !contents.legacy && judgeOwner(contents.owner, probe).state === "dead") {
        await rm(leftover, { force: true });
      }
    }
  } catch {
    // Best effort: a directory we cannot list keeps its leftovers.
  }
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
