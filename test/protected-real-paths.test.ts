/**
 * R-S10 through the CLI: in acceptEdits, a Write through a committed symlink into `.git/`
 * is not approved — for the main agent and for an Agent sub-agent in a worker thread alike —
 * while the same Write through an ordinary symlink to a source directory is (the baseline shows
 * the run could write, so the refusal is about the target).
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
import { runCliInProcess, startSimInProcess } from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let base: string;
beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "forkloop-protected-paths-")));
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

function project(name: string): string {
  const root = join(base, name);
  mkdirSync(join(root, "src"), { recursive: true });
  execFileSync("git", ["init", "-q", root]);
  symlinkSync(".git", join(root, "cfg"));
  symlinkSync("src", join(root, "source"));
  return root;
}

const writes = {
  content: [
    {
      type: "tool_use",
      name: "Write",
      input: { file_path: "cfg/hooks/pre-commit", content: "#!/bin/sh\ntouch pwned\n" },
    },
    { type: "tool_use", name: "Write", input: { file_path: "source/ok.ts", content: "export {};\n" } },
  ],
};

async function runScenario(root: string, rules: readonly Record<string, unknown>[], args: string[]) {
  const scenario = join(root, "..", `${root.split("/").pop()}-scenario.json`);
  writeFileSync(
    scenario,
    JSON.stringify({ rules, fallback: { content: [{ type: "text", text: "done (scripted)" }] } }),
  );
  const sim = await startSimInProcess(root, ["--scenario", scenario]);
  try {
    return await runCliInProcess(args, { cwd: root, env: { ...sim.env, HOME: join(root, "..", "home") } });
  } finally {
    await sim.stop();
  }
}

describe("R-S10: protected directories by real path, main agent and sub-agents (CLI)", () => {
  it("R-S10: the main agent's Write through a symlink to .git is refused in acceptEdits; through a symlink to src it is written", async () => {
    const root = project("main-agent");
    const result = await runScenario(
      root,
      [{ match: { turn: 0 }, reply: writes }],
      ["run", "write", "--permission-mode", "acceptEdits", "--output-format", "stream-json", "--verbose"],
    );
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(join(root, ".git/hooks/pre-commit"))).toBe(false);
    expect(result.stdout).toMatch(/inside \.git\/, whose files can make git or forkloop run programs/);
    expect(readFileSync(join(root, "src/ok.ts"), "utf8")).toBe("export {};\n");
  }, 120_000);

  it("R-S10: an Agent sub-agent (worker thread) gets the same judgement", async () => {
    const root = project("sub-agent");
    const result = await runScenario(
      root,
      [
        { match: { querySource: "agent:general-purpose" }, reply: writes, times: 1 },
        {
          match: { turn: 0, querySource: "sdk" },
          reply: {
            content: [{ type: "tool_use", name: "Agent", input: { description: "write", prompt: "Write." } }],
          },
        },
      ],
      ["run", "delegate", "--permission-mode", "acceptEdits"],
    );
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(join(root, ".git/hooks/pre-commit"))).toBe(false);
    expect(readFileSync(join(root, "src/ok.ts"), "utf8")).toBe("export {};\n");
  }, 120_000);
});
