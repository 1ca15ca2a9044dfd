/**
 * R-V2: the installed `forkloop` runs from its bundle (apps/forkloop/scripts/bundle.mjs), not from
 * the workspace packages. The bundle is copied beside a node_modules that holds only the
 * third-party packages forkloop declares — no @forkloop package — so a module it still loads from
 * a workspace package, a worker entry or page asset it cannot find beside itself, or a package it
 * requires at run time without declaring it, fails here.
 */
import { execFile } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { cliEnv } from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = join(import.meta.dirname, "..");
const app = join(root, "apps/forkloop");
const manifest = JSON.parse(readFileSync(join(app, "package.json"), "utf8")) as {
  dependencies: Record<string, string>;
};

let work: string;
let command: string;
let project: string;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "forkloop-bundle-"));
  const installed = join(work, "forkloop");
  for (const part of ["bin", "dist", "package.json"])
    cpSync(join(app, part), join(installed, part), { recursive: true });
  for (const name of Object.keys(manifest.dependencies).filter((name) => !name.startsWith("@forkloop/"))) {
    mkdirSync(dirname(join(installed, "node_modules", name)), { recursive: true });
    symlinkSync(join(root, "node_modules", name), join(installed, "node_modules", name));
  }
  command = join(installed, "bin/forkloop.js");
  project = join(work, "project");
  mkdirSync(project);
  writeFileSync(join(project, "a.txt"), "alpha alpha beta\n");
  writeFileSync(join(project, "b.txt"), "gamma delta\n");
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

const forkloop = (args: string[]) =>
  run(process.execPath, [command, ...args], { cwd: project, env: cliEnv({}, project) });

describe("R-V2: the installed command runs from its bundle", () => {
  it("R-V2: every file the bundle finds beside itself (worker entries, the report page) is there", () => {
    const dist = join(app, "dist");
    const beside = new Set<string>();
    for (const file of readdirSync(dist).filter((name) => name.endsWith(".js"))) {
      const code = readFileSync(join(dist, file), "utf8");
      for (const match of code.matchAll(/new URL\("(\.\/[^"]+)", import\.meta\.url\)/g))
        beside.add(String(match[1]));
    }
    expect([...beside].sort()).toEqual([
      "./grep-thread.worker.js",
      "./page/",
      "./pdf-thread.worker.js",
      "./worker.js",
    ]);
    for (const path of beside) expect(existsSync(join(dist, path)), path).toBe(true);
  });

  it("R-V2: a sub-agent thread compiles the API client's Messages resources only, not the client the CLI uses (every resource)", () => {
    const dist = join(app, "dist");
    /** The bundle's sources (rolldown heads each with a `// <path>` line) a thread loads before it runs. */
    const loadedBy = (entry: string, seen = new Set<string>()): Set<string> => {
      if (seen.has(entry)) return seen;
      seen.add(entry);
      const code = readFileSync(join(dist, entry), "utf8");
      for (const match of code.matchAll(/^(?:import|export)[^;]*? from "\.\/([^"]+)";/gm))
        loadedBy(String(match[1]), seen);
      return seen;
    };
    // loop-core's own bundle inlines the SDK (scripts/bundle-package.mjs): a file of it stands for
    // the SDK modules its modules.json lists.
    const loopCore = JSON.parse(
      readFileSync(join(root, "packages/loop-core/bundle/modules.json"), "utf8"),
    ) as Record<string, string[]>;
    const sdkPath = (path: string) => /@anthropic-ai\/sdk\/(\S+)$/.exec(path)?.[1] ?? [];
    const sources = (entries: Set<string>) =>
      [...entries].flatMap((entry) =>
        [...readFileSync(join(dist, entry), "utf8").matchAll(/^\/\/ (\S+)$/gm)].flatMap(([, path = ""]) => {
          const chunk = /packages\/loop-core\/bundle\/(\S+)$/.exec(path)?.[1];
          return chunk === undefined ? sdkPath(path) : (loopCore[chunk] ?? []).flatMap(sdkPath);
        }),
      );
    const worker = sources(loadedBy("worker.js"));
    expect(worker).toContain("resources/messages/messages.mjs");
    // Control for each: the full client is in the bundle, where the CLI's main thread loads it.
    const all = sources(new Set(readdirSync(dist).filter((name) => name.endsWith(".js"))));
    for (const resource of [
      "models",
      "skills/skills",
      "organization/organization",
      "user-profiles/user-profiles",
    ]) {
      expect(worker).not.toContain(`resources/${resource}.mjs`);
      expect(all).toContain(`resources/${resource}.mjs`);
    }
  });

  it("R-V2: a one-shot run whose reply forks a sub-agent per file finishes (the pool's thread loads the bundle's worker), and its report page is written", async () => {
    const { stdout } = await forkloop(["run", "Summarize a.txt and b.txt", "--output-format", "json"]);
    const result = JSON.parse(stdout) as { subtype: string; session_id: string; result: string };
    expect(result.subtype).toBe("success");
    expect(result.result).toContain("2 sub-agents finished");
    expect(result.result).toContain("Most frequent words: alpha");

    const page = join(work, "report.html");
    await forkloop(["report", result.session_id, "--out", page]);
    expect(readFileSync(page, "utf8")).toMatch(/<script>[\s\S]{1000,}<\/script>/);
  });
});
