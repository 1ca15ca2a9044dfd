#!/usr/bin/env node
/**
 * Packs the release tarballs (R-K4): one per library package (`@forkloop/sim` …
 * `@forkloop/cli`, for `npm i @forkloop/sdk` and the rest) and `forkloop`, the package users
 * install, with its whole production dependency tree bundled inside (as npm itself ships), so
 * `npm i -g forkloop-<version>.tgz` and `npx` need no registry, no cache and no build.
 *
 * Why a staging directory: `npm pack` of a workspace leaves out the bundled dependencies that are
 * hoisted to the root node_modules (npm/cli#3466). So `forkloop` is packed from a copy whose
 * node_modules holds exactly what package-lock.json says its dependencies resolve to: the
 * library tarballs, unpacked, and the third-party packages, copied. Optional dependencies
 * (platform-specific native add-ons with pure-JavaScript fallbacks) are left out.
 *
 * Usage: node scripts/pack-release.mjs [OUT_DIR]   (default release/; `npm run build` first)
 * Prints one JSON object: { version, libraries: [tarball…], command: tarball }.
 */
import { execFileSync } from "node:child_process";
import {
  copyFileSync,
  cpSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, posix, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
const COMMAND_WORKSPACE = "apps/forkloop";

/** @param {string} dir */
const readManifest = (dir) => JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8"));

/** @param {string[]} args */
const npm = (args, cwd = root) =>
  execFileSync("npm", [...args, "--ignore-scripts", "--no-audit", "--no-fund"], {
    cwd,
    encoding: "utf8",
    // `npm pack --json` lists every bundled file: megabytes, past execFileSync's 1 MiB default.
    maxBuffer: 256 * 1024 * 1024,
    stdio: ["ignore", "pipe", "inherit"],
  });

/** `npm pack --json` of the given workspaces (or a directory) into `destination`; the tarball paths. */
function pack(targets, destination) {
  const report = JSON.parse(npm(["pack", ...targets, "--pack-destination", destination, "--json"]));
  return report.map((/** @type {{ filename: string }} */ entry) => join(destination, entry.filename));
}

const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8"));
/** @type {Record<string, any>} */
const lockPackages = lock.packages;

// Workspaces are the lockfile's entries outside node_modules; the published ones are not private.
const published = Object.keys(lockPackages)
  .filter((key) => key !== "" && !key.startsWith("node_modules/") && !key.includes("/node_modules/"))
  .filter((dir) => readManifest(dir).private !== true);
const libraries = published.filter((dir) => dir !== COMMAND_WORKSPACE);
for (const dir of published) {
  if (!existsSync(join(root, dir, "dist")))
    throw new Error(`${dir}/dist is missing: run \`npm run build\` first`);
}

const out = resolve(process.argv[2] ?? join(root, "release"));
mkdirSync(out, { recursive: true });
const libraryTarballs = pack(
  libraries.flatMap((dir) => ["--workspace", dir]),
  out,
);
const tarballOf = new Map(libraries.map((dir, index) => [readManifest(dir).name, libraryTarballs[index]]));

/**
 * Node's lookup of `name` from the package at lockfile path `from`: `<from>/node_modules/<name>`,
 * then each ancestor directory's node_modules, up to the root's.
 */
function resolveDependency(from, name) {
  for (let dir = from; ; dir = posix.dirname(dir)) {
    const key = dir === "." || dir === "" ? `node_modules/${name}` : `${dir}/node_modules/${name}`;
    if (lockPackages[key]) return key;
    if (dir === "." || dir === "") return undefined;
  }
}

/** The lockfile entry of a package and the path it lives at (a workspace link points at its directory). */
function entryAt(key) {
  const entry = lockPackages[key];
  return entry.link ? { path: entry.resolved, entry: lockPackages[entry.resolved] } : { path: key, entry };
}

/**
 * What a bundled third-party package does not need at run time, by its path inside the package:
 * source maps (nothing loads them, and they are a third of the files), its documentation apart
 * from licence texts, and the test suites some packages publish (domino's alone is 959 files).
 * Type declarations stay: the SDK's types name its dependencies' types. Every file left out is
 * one less for the archive and for every install to walk.
 */
const TEST_DIRECTORIES = new Set(["test", "tests", "__tests__"]);
const leftOut = (/** @type {string[]} */ segments) => {
  const name = segments.at(-1) ?? "";
  return (
    segments.includes("node_modules") ||
    name.endsWith(".map") ||
    (/\.(md|markdown)$/i.test(name) && !/^(licen[cs]e|notice|copying)/i.test(name)) ||
    TEST_DIRECTORIES.has(segments[0] ?? "")
  );
};

/**
 * Places a third-party package's files in the staged tree as hard links to the installed ones
 * (a copy where the two directories are on different file systems): the archive reads them once
 * either way, and linking is one system call a file where copying is several and writes the bytes
 * again. Nothing writes to a linked file: the staged tree is only read by tar, then removed.
 * Nested node_modules are placed by their own visit (optional native add-ons never are).
 */
function linkTree(source, target, segments) {
  for (const entry of readdirSync(source, { withFileTypes: true })) {
    const path = [...segments, entry.name];
    if (leftOut(path)) continue;
    const from = join(source, entry.name);
    const to = join(target, entry.name);
    if (entry.isDirectory()) {
      mkdirSync(to);
      linkTree(from, to, path);
    } else if (entry.isSymbolicLink()) {
      symlinkSync(readlinkSync(from), to);
    } else {
      try {
        linkSync(from, to);
      } catch (error) {
        if (/** @type {NodeJS.ErrnoException} */ (error).code !== "EXDEV") throw error;
        copyFileSync(from, to);
      }
    }
  }
}

const stage = mkdtempSync(join(tmpdir(), "forkloop-pack-"));
try {
  const [commandTarball] = pack([join(root, COMMAND_WORKSPACE)], stage);
  const packageDir = join(stage, "package");
  mkdirSync(packageDir);
  execFileSync("tar", ["-xzf", commandTarball, "-C", packageDir, "--strip-components=1"]);
  rmSync(commandTarball);

  // Where each bundled package goes in the staged package: a workspace library at
  // node_modules/<name>; a third-party package at its lockfile path, re-rooted under the
  // workspace it is nested in (packages/tools/node_modules/x → node_modules/@forkloop/tools/node_modules/x).
  /** @type {Map<string, string>} */
  const destinationOfPath = new Map([[COMMAND_WORKSPACE, ""]]);
  const destination = (path, name) => {
    if (tarballOf.has(name) && !path.includes("node_modules/")) return `node_modules/${name}`;
    for (const [workspace, placed] of destinationOfPath) {
      if (!workspace.startsWith("node_modules/") && path.startsWith(`${workspace}/`)) {
        return posix.join(placed, path.slice(workspace.length + 1));
      }
    }
    return path;
  };

  const visited = new Set();
  const visit = (from) => {
    const { entry } = entryAt(from);
    const optionalPeers = new Set(
      Object.entries(entry.peerDependenciesMeta ?? {})
        .filter(([, meta]) => meta.optional)
        .map(([name]) => name),
    );
    const names = [
      ...Object.keys(entry.dependencies ?? {}),
      ...Object.keys(entry.peerDependencies ?? {}).filter((name) => !optionalPeers.has(name)),
    ];
    for (const name of names) {
      const key = resolveDependency(entryAt(from).path, name);
      if (key === undefined) throw new Error(`${from}: dependency ${name} is not in package-lock.json`);
      const { path } = entryAt(key);
      if (visited.has(path)) continue;
      visited.add(path);
      const placed = destination(path, name);
      destinationOfPath.set(path, placed);
      const target = join(packageDir, placed);
      mkdirSync(target, { recursive: true });
      if (tarballOf.has(name)) {
        // Bundle exactly what was published for the library, not the working tree.
        execFileSync("tar", ["-xzf", tarballOf.get(name), "-C", target, "--strip-components=1"]);
      } else {
        linkTree(join(root, path), target, []);
      }
      visit(path);
    }
  };
  visit(COMMAND_WORKSPACE);

  const manifestPath = join(packageDir, "package.json");
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
  manifest.bundleDependencies = Object.keys(manifest.dependencies ?? {});
  // The staged copy is the published artifact: its build scripts would have nothing to build.
  delete manifest.scripts;
  writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  cpSync(join(root, "LICENSE"), join(packageDir, "LICENSE"));
  // The archive is written by tar, not `npm pack`: npm walks and gzips the thousands of bundled
  // files in JavaScript (about 10× tar's CPU time, minutes of a loaded CI machine). The staged
  // directory holds exactly the published files; they go under npm's `package/` prefix, sorted,
  // with the owner and timestamp npm gives every entry.
  const command = join(out, `${manifest.name}-${manifest.version}.tgz`);
  execFileSync("tar", [
    "-czf",
    command,
    "-C",
    stage,
    "--sort=name",
    "--owner=0",
    "--group=0",
    "--numeric-owner",
    "--mtime=1985-10-26T08:15:00Z",
    "--hard-dereference",
    "package",
  ]);
  process.stdout.write(
    `${JSON.stringify({ version: manifest.version, libraries: libraryTarballs, command }, null, 2)}\n`,
  );
} finally {
  rmSync(stage, { recursive: true, force: true });
}
