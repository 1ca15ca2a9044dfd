/**
 * The safe baselines keep working after the trust protections (R-S7 … R-S12). One
 * row per baseline — its name (with the R-id whose protection it must survive), a setup on a real
 * temporary directory, and an assertion on what the real tools did there. Add rows, keep it a table.
 */
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TEST_SERVER_PATH } from "@forkloop/mcp/testing";
import type { Options } from "@forkloop/sdk";
import { type Simulator, startSimulator } from "@forkloop/sim";
import { createBashTool, createBuiltinTools, createPermissionChecker, grepTool } from "@forkloop/tools";
import { callTool, createToolTestContext, resultText } from "@forkloop/tools/testing";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runTrustSession, type SessionSeen } from "./support/trust-session.js";

interface Baseline {
  readonly name: string;
  readonly setup: (dir: string) => void | Promise<void>;
  readonly assertion: (dir: string) => void | Promise<void>;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
    cwd,
    encoding: "utf8",
  });
}

function repository(dir: string): void {
  git(dir, "init", "-q", "-b", "main");
  writeFileSync(join(dir, "a.txt"), "a\n");
  git(dir, "add", "a.txt");
  git(dir, "commit", "-q", "-m", "first");
}

/** A Bash call in the sandbox, as batch and dontAsk run it by default (R-S6, R-S9). */
async function sandboxedBash(dir: string, command: string): Promise<{ text: string; isError: boolean }> {
  const tool = createBashTool({ sandbox: { enabled: true }, home: join(dir, "home") });
  const result = await callTool(tool, { command }, createToolTestContext({ cwd: dir }));
  return { text: resultText(result), isError: result.isError === true };
}

const GIT_ID = "-c user.name=t -c user.email=t@example.com";

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.close());

/** One query() session in `dir` against the simulator (home and state beside the project files). */
function session(dir: string, extra?: Options): Promise<SessionSeen> {
  mkdirSync(join(dir, ".home"), { recursive: true });
  return runTrustSession(sim, {
    cwd: dir,
    home: join(dir, ".home"),
    stateDir: join(dir, ".state"),
    ...(extra === undefined ? {} : { extra }),
  });
}

function succeeded(seen: SessionSeen): void {
  expect(seen.error).toBeUndefined();
  expect(seen.messages.at(-1)).toMatchObject({ type: "result", subtype: "success" });
}

function write(path: string, text: string): void {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
}

/** 2,000 source files in 40 directories; one in 50 holds the needle (R-S12 baselines). */
function sourceTree(dir: string): void {
  for (let module = 0; module < 40; module++) {
    mkdirSync(join(dir, "src", `m${module}`), { recursive: true });
    for (let file = 0; file < 50; file++) {
      const needle = file % 50 === 7 ? "// MARK(needle): handle the edge case\n" : "";
      writeFileSync(
        join(dir, "src", `m${module}`, `f${file}.ts`),
        `export const value = compute(${module}, ${file});\n${needle}export function f${file}() {}\n`,
      );
    }
  }
}

const BASELINES: readonly Baseline[] = [
  {
    name: "R-S9: git add, commit, branch and checkout -b inside the sandbox",
    setup: repository,
    assertion: async (dir) => {
      const run = await sandboxedBash(
        dir,
        `echo b > b.txt && git add b.txt && git ${GIT_ID} commit -q -m second && git branch side && git checkout -q -b feature`,
      );
      expect(run.isError, run.text).toBe(false);
      expect(git(dir, "log", "--format=%s", "side").trim()).toBe("second\nfirst");
      expect(git(dir, "branch", "--show-current").trim()).toBe("feature");
    },
  },
  {
    name: "R-S9: a repository's own hook runs for a commit inside the sandbox (it is the repository's, not planted)",
    setup: (dir) => {
      repository(dir);
      writeFileSync(join(dir, ".git/hooks/pre-commit"), "#!/bin/sh\necho hook ran > hook.txt\n", {
        mode: 0o755,
      });
    },
    assertion: async (dir) => {
      const run = await sandboxedBash(dir, `echo c > c.txt && git add c.txt && git ${GIT_ID} commit -q -m c`);
      expect(run.isError, run.text).toBe(false);
      expect(readFileSync(join(dir, "hook.txt"), "utf8")).toBe("hook ran\n");
    },
  },
  {
    name: "R-S9: with home inside the workspace, a sandboxed shell still sources ~/.bashrc and git commits with ~/.gitconfig's identity (read-only, not hidden)",
    setup: (dir) => {
      repository(dir);
      mkdirSync(join(dir, "home"));
      writeFileSync(join(dir, "home", ".bashrc"), "export GREETING=hello\n");
      writeFileSync(join(dir, "home", ".gitconfig"), "[user]\n\tname = Home User\n\temail = h@example.com\n");
    },
    assertion: async (dir) => {
      const run = await sandboxedBash(
        dir,
        'export HOME="$PWD/home"; . ~/.bashrc && echo "$GREETING" && echo d > d.txt && git add d.txt && git commit -q -m d && git log --format=%an -n 1',
      );
      expect(run.isError, run.text).toBe(false);
      expect(run.text).toBe("hello\nHome User");
    },
  },
  {
    name: "R-S9: a build writes inside the workspace and its own /tmp inside the sandbox",
    setup: (dir) => mkdirSync(join(dir, "src")),
    assertion: async (dir) => {
      const run = await sandboxedBash(
        dir,
        "mkdir -p build && t=$(mktemp) && echo built > $t && cp $t build/out.txt && echo ok",
      );
      expect(run.text).toBe("ok");
      expect(readFileSync(join(dir, "build/out.txt"), "utf8")).toBe("built\n");
    },
  },
  {
    name: "R-S10: in acceptEdits, a Write to a symlinked source file inside the workspace is approved and written",
    setup: (dir) => {
      mkdirSync(join(dir, "src"));
      writeFileSync(join(dir, "src/real.ts"), "export const a = 1;\n");
      symlinkSync("src/real.ts", join(dir, "linked.ts"));
      repository(dir);
    },
    assertion: async (dir) => {
      const tools = createBuiltinTools();
      const checker = createPermissionChecker({
        mode: "acceptEdits",
        rules: { allow: [], ask: [], deny: [] },
        tools,
        cwd: dir,
      });
      const input = { file_path: join(dir, "linked.ts"), content: "export const a = 2;\n" };
      const decision = await checker("Write", input, {
        signal: new AbortController().signal,
        toolUseId: "t",
        agentId: "main",
      });
      expect(decision).toEqual({ behavior: "allow", decidedBy: { source: "config", reasonType: "mode" } });
      const tool = (name: string) => {
        const found = tools.find((candidate) => candidate.name === name);
        if (found === undefined) throw new Error(`no ${name} tool`);
        return found;
      };
      const context = createToolTestContext({ cwd: dir });
      // Write changes an existing file only after this agent read it.
      await callTool(tool("Read"), { file_path: input.file_path }, context);
      const result = await callTool(tool("Write"), input, context);
      expect(result.isError, resultText(result)).not.toBe(true);
      expect(readFileSync(join(dir, "src/real.ts"), "utf8")).toBe("export const a = 2;\n");
    },
  },
  {
    name: "R-S8: a CLAUDE.md that imports a file inside the repository sends both",
    setup: (dir) => {
      repository(dir);
      write(join(dir, "CLAUDE.md"), "Project rules.\n@docs/conventions.md\n");
      write(join(dir, "docs", "conventions.md"), "Indent with tabs (BASELINE-IMPORT).\n");
    },
    assertion: async (dir) => {
      const seen = await session(dir);
      succeeded(seen);
      expect(seen.systemPrompts[0]).toContain("Project rules.");
      expect(seen.systemPrompts[0]).toContain("BASELINE-IMPORT");
      expect(seen.systemPrompts[0]).toContain(`imported by ${join(dir, "CLAUDE.md")}`);
    },
  },
  {
    name: "R-S8: a memory file that is a symlink to a source file inside the workspace is read",
    setup: (dir) => {
      write(join(dir, "docs", "agent-guide.md"), "Run the linter first (BASELINE-SYMLINK).\n");
      symlinkSync(join("docs", "agent-guide.md"), join(dir, "AGENTS.md"));
    },
    assertion: async (dir) => {
      const seen = await session(dir);
      succeeded(seen);
      expect(seen.systemPrompts[0]).toContain("BASELINE-SYMLINK");
      expect(seen.stderr.filter((line) => line.includes("skipped"))).toEqual([]);
    },
  },
  {
    name: "R-S7: git status still reaches the system prompt for an ordinary repository",
    setup: (dir) => {
      repository(dir);
      writeFileSync(join(dir, "a.txt"), "changed\n");
    },
    assertion: async (dir) => {
      const seen = await session(dir);
      succeeded(seen);
      expect(seen.systemPrompts[0]).toContain("Current branch: main");
      expect(seen.systemPrompts[0]).toContain(" M a.txt");
      expect(seen.systemPrompts[0]).toContain("first");
    },
  },
  {
    name: "R-S8/R-S5: a trusted project's own hooks still run",
    setup: (dir) =>
      write(
        join(dir, ".forkloop", "settings.json"),
        JSON.stringify({
          hooks: {
            UserPromptSubmit: [{ hooks: [{ type: "command", command: `touch '${join(dir, "hook-ran")}'` }] }],
          },
        }),
      ),
    assertion: async (dir) => {
      succeeded(await session(dir, { trustProject: true, settingSources: ["project"] }));
      expect(existsSync(join(dir, "hook-ran"))).toBe(true);
    },
  },
  {
    name: "R-S8/R-S5: a trusted project's own MCP servers (.mcp.json) still start",
    setup: (dir) =>
      write(
        join(dir, ".mcp.json"),
        JSON.stringify({ mcpServers: { baseline: { command: process.execPath, args: [TEST_SERVER_PATH] } } }),
      ),
    assertion: async (dir) => {
      const seen = await session(dir, { trustProject: true, settingSources: ["project"] });
      succeeded(seen);
      expect(seen.bodies[0]).toContain('"name":"mcp__baseline__echo"');
    },
  },
  {
    name: "R-S12: an ordinary regex over a large tree finds what it found before (linear-time engine)",
    setup: sourceTree,
    assertion: async (dir) => {
      const context = createToolTestContext({ cwd: dir });
      const grep = async (input: Record<string, unknown>) =>
        resultText(await callTool(grepTool, input, context));
      expect(await grep({ pattern: "MARK\\(needle\\)" })).toMatch(/^Found 40 files\n/);
      expect(await grep({ pattern: "\\bf7\\(\\)", output_mode: "count", glob: "src/m1/*.ts" })).toMatch(
        /f7\.ts:1\n\nFound 1 total matching line across 1 file/,
      );
      expect(await grep({ pattern: "(?i)mark\\(\\w+\\)", output_mode: "content", head_limit: 1 })).toMatch(
        /:2:\/\/ MARK\(needle\): handle the edge case/,
      );
      expect(await grep({ pattern: "^export function f\\d+\\(\\) \\{\\}$", glob: "*.{ts,js}" })).toMatch(
        /^Found 2000 files\n/,
      );
    },
  },
  {
    name: "R-S12: ordinary globs in Glob, LS's ignore and a Bash word (auto-approved read of src/m1/*.ts)",
    setup: sourceTree,
    assertion: async (dir) => {
      const tools = createBuiltinTools();
      const context = createToolTestContext({ cwd: dir });
      const byName = (name: string) => tools.find((tool) => tool.name === name) as (typeof tools)[number];
      const glob = resultText(await callTool(byName("Glob"), { pattern: "src/m1/f1*.ts" }, context));
      expect(glob.split("\n").sort()).toEqual(
        ["f1", "f10", "f11", "f12", "f13", "f14", "f15", "f16", "f17", "f18", "f19"].map((name) =>
          join(dir, "src/m1", `${name}.ts`),
        ),
      );
      const ls = resultText(
        await callTool(byName("LS"), { path: "src", ignore: ["m[1-3]*", "*.ts"] }, context),
      );
      expect(ls).toMatch(/- m0\//);
      expect(ls).not.toMatch(/- m1\/|- m2\/|f0\.ts/);
      const check = createPermissionChecker({
        mode: "default",
        rules: { allow: [], ask: [], deny: ["Read(./.env)"] },
        tools,
        cwd: dir,
      });
      const decision = await check(
        "Bash",
        { command: "head -1 src/m1/*.ts" },
        {
          signal: new AbortController().signal,
          toolUseId: "toolu_baseline",
          agentId: "main",
        },
      );
      expect(decision.behavior).toBe("allow");
    },
  },
];

let dir: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "forkloop-baseline-")));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("R-S7…R-S12: safe baselines keep working", () => {
  for (const baseline of BASELINES) {
    it(baseline.name, async () => {
      await baseline.setup(dir);
      await baseline.assertion(dir);
    });
  }
});
