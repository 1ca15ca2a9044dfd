import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = join(import.meta.dirname, "..");
const tsc = join(root, "node_modules", ".bin", "tsc");

async function compile(config: string): Promise<{ code: number; output: string }> {
  try {
    await run(tsc, ["-p", join(import.meta.dirname, "agent-sdk-compat", "tsconfig", config)], { cwd: root });
    return { code: 0, output: "" };
  } catch (error) {
    const failure = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failure.code ?? 1, output: `${failure.stdout ?? ""}${failure.stderr ?? ""}` };
  }
}

// The fixture imports "@anthropic-ai/claude-agent-sdk" (installed types-only by
// agent-sdk-compat/ensure-installed.mjs, the `pretest` script); forkloop.json maps that import to
// packages/sdk/src.
describe("issue-14: a program written against the Claude Agent SDK's types", () => {
  it("issue-14 Done-when 1: compiles against the Agent SDK 0.3.328 itself (it is a genuine Agent SDK program)", async () => {
    const result = await compile("agent-sdk.json");
    expect(result.output).toBe("");
    expect(result.code).toBe(0);
  });

  it("issue-14 Done-when 1: compiles unchanged against @forkloop/sdk (query, Options, Query, messages, callbacks, tool, session helpers)", async () => {
    const result = await compile("forkloop.json");
    expect(result.output).toBe("");
    expect(result.code).toBe(0);
  });
});
