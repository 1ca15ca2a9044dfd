import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { cliEnv } from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReleaseTarballs, releaseTarballs } from "./support/release-tarballs.js";

const run = promisify(execFile);
const root = join(import.meta.dirname, "..");
const release = (
  JSON.parse(await readFile(join(root, "apps/forkloop/package.json"), "utf8")) as { version: string }
).version;

let work: string;
let prefix: string;
let project: string;
let packed: ReleaseTarballs;
/** npm without the update notice, and a cache of its own: the install must need nothing from it. */
let npmEnv: NodeJS.ProcessEnv;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "forkloop-install-"));
  prefix = join(work, "prefix");
  project = join(work, "project");
  await mkdir(join(project, "src"), { recursive: true });
  await writeFile(join(project, "src/a.txt"), "alpha beta\n");
  await writeFile(join(project, "src/b.txt"), "gamma delta\n");
  npmEnv = {
    ...cliEnv({ npm_config_update_notifier: "false", npm_config_cache: join(work, "npm-cache") }, project),
  };
  // Shared with install-as-published: one pack per build (test/support/release-tarballs.ts).
  packed = await releaseTarballs();
  // Offline, from an empty cache: everything `forkloop` needs is inside its tarball.
  await run("npm", ["i", "-g", "--prefix", prefix, "--offline", "--no-audit", "--no-fund", packed.command], {
    cwd: work,
    env: npmEnv,
  });
}, 600_000);
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

const forkloop = (args: string[]) =>
  run(join(prefix, "bin/forkloop"), args, { cwd: project, env: cliEnv({}, project) });

describe("R-K4: the packed tarballs install into an empty prefix and run outside the repository", () => {
  it("forkloop --version prints the release version", async () => {
    const { stdout } = await forkloop(["--version"]);
    expect(stdout).toBe(`${release} (forkloop)\n`);
    expect(packed.version).toBe(release);
  });

  it("forkloop run answers on the embedded simulator in a directory outside the repo", async () => {
    const { stdout, stderr } = await forkloop(["run", "Summarize src/a.txt"]);
    expect(stdout).toContain("Summary of src/a.txt");
    expect(stderr).toContain("simulator");
  });

  it("forkloop batch runs every file and writes its report", async () => {
    const { stdout } = await forkloop(["batch", "--files", "src/*.txt", "--prompt", "Summarize {{file}}"]);
    expect(stdout).toContain("2 items: 2 succeeded, 0 failed");
    const report = /report: +(\S+)/.exec(stdout)?.[1] ?? "";
    expect(await readFile(report, "utf8")).toContain("src/b.txt");
  });

  it("npx forkloop finds the installed command outside the repo", async () => {
    const { stdout } = await run("npx", ["--offline", "forkloop", "--version"], {
      cwd: project,
      env: { ...npmEnv, npm_config_prefix: prefix },
    });
    expect(stdout.trim()).toBe(`${release} (forkloop)`);
  });

  it("the installed package is the SDK too: import from 'forkloop'", async () => {
    const { stdout } = await run(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        'const sdk = await import("forkloop"); console.log(sdk.FORKLOOP_VERSION)',
      ],
      { cwd: join(prefix, "lib"), env: cliEnv({}, project) },
    );
    expect(stdout.trim()).toBe(release);
  });

  it("npx forkloop in the clone runs the workspace's bin (npm ci links it)", async () => {
    const { stdout } = await run("npx", ["--offline", "forkloop", "--version"], { cwd: root, env: npmEnv });
    expect(stdout.trim()).toBe(`${release} (forkloop)`);
  });

  it("each library tarball holds its dist/ and a publishable manifest pinned to the release", async () => {
    // Every workspace package under packages/ and apps/ is a library tarball, except `forkloop` itself.
    const workspaces = ["packages", "apps"].flatMap((parent) =>
      readdirSync(join(root, parent)).map((name) => `${parent}/${name}`),
    );
    expect(packed.libraries).toHaveLength(workspaces.length - 1);
    for (const tarball of packed.libraries) {
      const { stdout: listing } = await run("tar", ["-tzf", tarball]);
      const files = listing.trim().split("\n");
      expect(files).toContain("package/dist/index.js");
      // dist/, and the bundles made from it (scripts/bundle-package.mjs) where the package has them.
      expect(
        files.filter((file) => !/^package\/(dist\/|bundle\/|package\.json$|README\.md$)/.test(file)),
      ).toEqual([]);
      expect(files.filter((file) => /\.test\.|test-support/.test(file))).toEqual([]);
      const { stdout: text } = await run("tar", ["-xzOf", tarball, "package/package.json"]);
      const manifest = JSON.parse(text) as {
        private?: boolean;
        main?: string;
        dependencies?: Record<string, string>;
      };
      expect(manifest.private).toBeUndefined();
      // The entry the manifest names is in the tarball (a bundle's index, or dist's).
      expect(files).toContain(`package/${(manifest.main ?? "./dist/index.js").replace(/^\.\//, "")}`);
      for (const [name, range] of Object.entries(manifest.dependencies ?? {}))
        if (name.startsWith("@forkloop/")) expect(range).toBe(release);
    }
  });
});
