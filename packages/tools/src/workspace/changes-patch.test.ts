import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { changesPatch } from "./apply-changes.js";
import type { FileChange } from "./isolated-workspace.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-changes-patch-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * A global git config naming programs a porcelain diff starts: `diff.external`, and a `textconv`
 * driver that its `core.attributesFile` selects for every path. Each program leaves a marker.
 */
async function plantGlobalConfig(): Promise<{ config: string; ran: (name: string) => boolean }> {
  const program = async (name: string) => {
    const path = join(dir, name);
    await writeFile(path, `#!/bin/sh\ntouch ${join(dir, `${name}.ran`)}\ncat "$1" 2>/dev/null\n`);
    await chmod(path, 0o755);
    return path;
  };
  await writeFile(join(dir, "attributes"), "* diff=planted\n");
  const config = join(dir, "gitconfig");
  await writeFile(
    config,
    `[diff]\n\texternal = ${await program("external")}\n[core]\n\tattributesFile = ${join(dir, "attributes")}\n[diff "planted"]\n\ttextconv = ${await program("textconv")}\n`,
  );
  return { config, ran: (name) => existsSync(join(dir, `${name}.ran`)) };
}

/** Runs `body` with git's global config at `config` (the unit tier shares this process: restored). */
async function withGlobalConfig<T>(config: string, body: () => Promise<T>): Promise<T> {
  const before = process.env.GIT_CONFIG_GLOBAL;
  process.env.GIT_CONFIG_GLOBAL = config;
  try {
    return await body();
  } finally {
    if (before === undefined) delete process.env.GIT_CONFIG_GLOBAL;
    else process.env.GIT_CONFIG_GLOBAL = before;
  }
}

const CHANGE: readonly FileChange[] = [
  { path: "src/a.txt", before: Buffer.from("one\n"), after: Buffer.from("two\n"), mode: 0o644 },
];

describe("changesPatch: the kept diff of a conflict (R-S7)", () => {
  it("R-S7: runs no diff.external or textconv program the global config names, and is a patch git apply reads", async () => {
    const planted = await plantGlobalConfig();
    const patch = (await withGlobalConfig(planted.config, () => changesPatch(CHANGE))).toString("utf8");
    expect(planted.ran("external")).toBe(false);
    expect(planted.ran("textconv")).toBe(false);
    expect(patch).toContain("diff --git a/src/a.txt b/src/a.txt");
    expect(patch).toContain("-one\n+two\n");
  });

  it("control: a plain git diff --no-index with that config starts both programs", async () => {
    const planted = await plantGlobalConfig();
    await writeFile(join(dir, "x"), "one\n");
    await writeFile(join(dir, "y"), "two\n");
    const diff = (...flags: string[]) => {
      try {
        execFileSync("git", ["diff", "--no-index", ...flags, "x", "y"], {
          cwd: dir,
          env: { ...process.env, GIT_CONFIG_GLOBAL: planted.config },
          stdio: "ignore",
        });
      } catch {
        // exit 1: the files differ
      }
    };
    diff();
    diff("--no-ext-diff");
    expect(planted.ran("external")).toBe(true);
    expect(planted.ran("textconv")).toBe(true);
  });
});
