/**
 * Issue 24 "Done when": the safe baselines keep working after the round-three protections. One
 * row per baseline — its name (with the R-id whose protection it must survive), a setup on a real
 * temporary directory, and an assertion on what the real tools did there. Add rows, keep it a table.
 */
import { execFileSync } from "node:child_process";
import {
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
import { createBashTool, createBuiltinTools, createPermissionChecker } from "@forkloop/tools";
import { callTool, createToolTestContext, resultText } from "@forkloop/tools/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

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
      expect(decision).toEqual({ behavior: "allow" });
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
];

let dir: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "forkloop-baseline-")));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("issue 24: safe baselines keep working", () => {
  for (const baseline of BASELINES) {
    it(baseline.name, async () => {
      await baseline.setup(dir);
      await baseline.assertion(dir);
    });
  }
});
