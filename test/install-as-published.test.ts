import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { cliEnv } from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { releaseTarballs } from "./support/release-tarballs.js";

const run = promisify(execFile);
const root = join(import.meta.dirname, "..");

interface Manifest {
  name: string;
  exports?: Record<string, unknown>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

/** Every published workspace (packages/ and apps/), with the subpaths its manifest exports. */
const workspaces = ["packages", "apps"].flatMap((parent) =>
  readdirSync(join(root, parent)).map((name) => {
    const dir = `${parent}/${name}`;
    return { dir, manifest: JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8")) as Manifest };
  }),
);

let work: string;
let app: string;
let project: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "forkloop-published-"));
  app = join(work, "app");
  project = join(work, "project");
  await Promise.all([app, join(project, "src")].map((dir) => mkdir(dir, { recursive: true })));
  await writeFile(join(project, "src/a.txt"), "alpha beta\n");
  await writeFile(join(app, "package.json"), '{ "name": "app", "private": true, "type": "module" }\n');
  // Each workspace exactly as `npm publish` would upload it: `forkloop` too, unbundled, so its
  // dependencies come from the library tarballs and the registry, as for `npm i forkloop`. The
  // pack is shared with install-from-tarballs (test/support/release-tarballs.ts).
  const release = await releaseTarballs();
  const packed = [...release.libraries, release.unbundledCommand];
  expect(packed).toHaveLength(workspaces.length);
  // Linked (isolated) layout: each package sees only what its own manifest declares, so an import
  // of an undeclared package fails here as it would for a user whose tree hoists differently —
  // npm's default hoisting would hide it behind a sibling that declares the same package.
  // Public dependencies come from the registry through the user's npm cache.
  await run(
    "npm",
    [
      "install",
      "--install-strategy=linked",
      "--prefer-offline",
      "--ignore-scripts",
      "--no-audit",
      "--no-fund",
      ...packed,
    ],
    { cwd: app, env: { ...process.env, npm_config_update_notifier: "false" }, maxBuffer: 64 * 1024 * 1024 },
  );
}, 600_000);
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe("every workspace package installs as published and declares what it imports (R-K4)", () => {
  it("each package's every exported subpath imports from an app outside the repository", async () => {
    const specifiers = workspaces.flatMap(({ manifest }) =>
      Object.keys(manifest.exports ?? { ".": "" })
        // The command's entry point runs the CLI when loaded: the bin runs it below.
        .filter((subpath) => !(manifest.name === "@forkloop/cli" && subpath === "./main"))
        .map((subpath) => ({
          specifier: subpath === "." ? manifest.name : `${manifest.name}/${subpath.slice(2)}`,
          // A subpath for tests may need its package's optional peer (vitest for the testing helpers).
          optionalPeers: Object.entries(manifest.peerDependenciesMeta ?? {})
            .filter(([, meta]) => meta.optional)
            .map(([name]) => name),
        })),
    );
    const script = `
      const results = {};
      for (const specifier of ${JSON.stringify(specifiers.map(({ specifier }) => specifier))}) {
        try { await import(specifier); results[specifier] = "ok"; }
        catch (error) { results[specifier] = String(error.message).split("\\n")[0]; }
      }
      console.log(JSON.stringify(results));`;
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], {
      cwd: app,
      env: cliEnv({}, project),
    });
    const results = JSON.parse(stdout) as Record<string, string>;
    expect(specifiers.length).toBeGreaterThan(workspaces.length);
    for (const { specifier, optionalPeers } of specifiers) {
      const result = results[specifier] ?? "";
      const missingPeer = optionalPeers.some((peer) => result.includes(`Cannot find package '${peer}'`));
      expect(missingPeer ? "ok" : result, specifier).toBe("ok");
    }
  });

  it("query() from the installed @forkloop/sdk answers on the embedded simulator", async () => {
    await writeFile(
      join(app, "one-shot.mjs"),
      `import { query } from "@forkloop/sdk";
for await (const message of query({ prompt: "Summarize src/a.txt", options: { cwd: process.argv[2] } }))
  if (message.type === "result") console.log(message.subtype, message.result);
`,
    );
    const { stdout, stderr } = await run(process.execPath, ["one-shot.mjs", project], {
      cwd: app,
      env: cliEnv({}, project),
    });
    expect(stdout).toContain("success Summary of src/a.txt");
    expect(stderr).toContain("simulator");
  });

  it("forkloop run, from the installed forkloop's bin, answers on the embedded simulator outside the repo", async () => {
    const { stdout, stderr } = await run(
      join(app, "node_modules/.bin/forkloop"),
      ["run", "Summarize src/a.txt"],
      {
        cwd: project,
        env: cliEnv({}, project),
      },
    );
    expect(stdout).toContain("Summary of src/a.txt");
    expect(stderr).toContain("simulator");
  });
});
