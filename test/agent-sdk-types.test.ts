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
// Each program is compiled against the Agent SDK itself (so it is a genuine Agent SDK program)
// and unchanged against @forkloop/sdk. The documentation-style one imports the named types those
// pages use (hook inputs, result variants, MCP server configs, AbortError) and sets options
// forkloop only accepts (effort, outputFormat, …).
const programs = [
  { config: "agent-sdk.json", what: "the fields of R-K1, against the Agent SDK 0.3.328 itself" },
  {
    config: "forkloop.json",
    what: "the same, unchanged against @forkloop/sdk (query, Options, Query, messages, callbacks, tool, session helpers)",
  },
  { config: "agent-sdk-docs.json", what: "a documentation-style program, against the Agent SDK itself" },
  {
    config: "forkloop-docs.json",
    what: "the same, unchanged against @forkloop/sdk (named types, results narrowed by subtype)",
  },
];

describe("R-K1: a program written against the Claude Agent SDK's types", () => {
  it.each(programs)("R-K1: compiles — $what", async ({ config }) => {
    const result = await compile(config);
    expect(result.output).toBe("");
    expect(result.code).toBe(0);
  });
});
