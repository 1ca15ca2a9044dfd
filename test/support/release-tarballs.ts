/**
 * The release tarballs, packed once per build for the install tests (R-K4): install-from-tarballs
 * installs `forkloop` as `scripts/pack-release.mjs` bundles it, install-as-published installs
 * every workspace as `npm publish` would upload it. The library tarballs are the same `npm pack`
 * in both, so one pack serves both files (each packed them for itself: the same minutes of npm
 * twice in a CI run).
 *
 * The pack lives in node_modules/.cache/forkloop-release/<key>, where the key is a hash of every
 * byte the tarballs are made of: each workspace's manifest and published files, the root LICENSE,
 * package-lock.json (the bundled dependency tree) and the pack script. A rebuild that changes a
 * published byte is a new key; an older key's directory is removed when a new one is written.
 * Two test files asking at once (two vitest workers) pack once: the first takes a lock directory,
 * the other waits for the finished pack.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const root = join(import.meta.dirname, "../..");
const cache = join(root, "node_modules/.cache/forkloop-release");
const COMMAND_WORKSPACE = "apps/forkloop";
const FINISHED = "release.json";

/** The tarballs of one build; every path absolute. */
export interface ReleaseTarballs {
  readonly version: string;
  /** One per library workspace (every workspace but `forkloop`), as `npm pack` makes it. */
  readonly libraries: readonly string[];
  /** `forkloop` with its production dependency tree bundled inside (pack-release.mjs). */
  readonly command: string;
  /** `forkloop` as `npm pack` makes it: unbundled, its dependencies from the library tarballs. */
  readonly unbundledCommand: string;
}

/** The published workspaces' directories (relative to the root): packages/* and apps/*. */
const workspaceDirs = (): string[] =>
  ["packages", "apps"].flatMap((parent) =>
    readdirSync(join(root, parent)).map((name) => `${parent}/${name}`),
  );

/** Every file under `path` (a file or a directory), sorted. */
function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((name) => filesUnder(join(path, name)));
}

/** The hash of every input of the tarballs (see the file's comment). */
function buildKey(): string {
  const hash = createHash("sha256");
  const add = (path: string) => {
    hash.update(`${path.slice(root.length)}\0`);
    hash.update(readFileSync(path));
  };
  for (const file of ["package-lock.json", "LICENSE", "scripts/pack-release.mjs"]) add(join(root, file));
  for (const dir of workspaceDirs()) {
    const manifest = JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8")) as {
      files?: string[];
    };
    for (const entry of ["package.json", "README.md", ...(manifest.files ?? [])])
      for (const file of filesUnder(join(root, dir, entry))) add(file);
  }
  return hash.digest("hex").slice(0, 16);
}

interface Finished {
  version: string;
  libraries: string[];
  command: string;
  unbundledCommand: string;
}

const resolved = (dir: string, finished: Finished): ReleaseTarballs => ({
  version: finished.version,
  libraries: finished.libraries.map((name) => join(dir, name)),
  command: join(dir, finished.command),
  unbundledCommand: join(dir, "unbundled", finished.unbundledCommand),
});

/** Packs into `dir` (a fresh directory): pack-release.mjs's tarballs, then `forkloop` unbundled. */
async function pack(dir: string): Promise<void> {
  const { stdout } = await run(process.execPath, [join(root, "scripts/pack-release.mjs"), dir], {
    cwd: root,
    maxBuffer: 64 * 1024 * 1024,
  });
  const released = JSON.parse(stdout) as { version: string; libraries: string[]; command: string };
  const unbundled = join(dir, "unbundled");
  await mkdir(unbundled);
  const { stdout: report } = await run(
    "npm",
    ["pack", "--workspace", COMMAND_WORKSPACE, "--pack-destination", unbundled, "--ignore-scripts", "--json"],
    { cwd: root, maxBuffer: 64 * 1024 * 1024 },
  );
  const [entry] = JSON.parse(report) as { filename: string }[];
  if (entry === undefined) throw new Error(`npm pack of ${COMMAND_WORKSPACE} reported no tarball`);
  const finished: Finished = {
    version: released.version,
    libraries: released.libraries.map((path) => basename(path)),
    command: basename(released.command),
    unbundledCommand: entry.filename,
  };
  await writeFile(join(dir, FINISHED), `${JSON.stringify(finished, null, 2)}\n`);
}

/** Whether the process that wrote `lock/pid` is still running. */
async function lockHeld(lock: string): Promise<boolean> {
  const pid = Number(await readFile(join(lock, "pid"), "utf8").catch(() => ""));
  // No pid yet: being written, unless its writer died in between (a minute is far past that).
  if (!Number.isInteger(pid) || pid <= 0)
    return Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? 0) < 60_000;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The release tarballs of the current build (`npm run build` first), packed on the first call. */
export async function releaseTarballs(): Promise<ReleaseTarballs> {
  const key = buildKey();
  const dir = join(cache, key);
  const lock = join(cache, `${key}.lock`);
  await mkdir(cache, { recursive: true });
  for (;;) {
    const done = await readFile(join(dir, FINISHED), "utf8").catch(() => undefined);
    if (done !== undefined) return resolved(dir, JSON.parse(done) as Finished);
    try {
      await mkdir(lock);
    } catch {
      // Another test file is packing this build: wait for it (or take over if it died).
      if (!(await lockHeld(lock))) await rm(lock, { recursive: true, force: true });
      await new Promise((resolve) => setTimeout(resolve, 250));
      continue;
    }
    try {
      await writeFile(join(lock, "pid"), String(process.pid));
      const staging = join(cache, `${key}.packing`);
      await rm(staging, { recursive: true, force: true });
      await mkdir(staging);
      await pack(staging);
      // Older builds' finished packs (a name without a suffix); another build's pack in progress stays.
      for (const name of readdirSync(cache))
        if (!name.includes(".")) await rm(join(cache, name), { recursive: true, force: true });
      await rename(staging, dir);
    } finally {
      await rm(lock, { recursive: true, force: true });
    }
  }
}
