import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliInProcess as runCli } from "@forkloop/cli/testing";
import { type BrainReply, type BrainRequest, type Simulator, startSimulator } from "@forkloop/sim";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

/**
 * The whole product in one run: `forkloop run` (its command, in this process: the process is not
 * the subject) drives the loop against the simulator over real HTTP — it reads a file, edits it,
 * runs a check with Bash and answers with what the check printed. The simulator's brain stands in
 * for the model; the file system, the tools, the permission rules and the subprocess are real.
 */
const BUGGY = "export function add(a, b) {\n  return a - b;\n}\n";
const CHECK =
  'import { add } from "./math.mjs";\nconsole.log(add(2, 3) === 5 ? "check ok" : "check FAILED");\n';

function codingBrain(request: BrainRequest): BrainReply {
  const result = request.lastToolResults[0];
  switch (request.turnIndex) {
    case 0:
      return { content: [{ type: "tool_use", name: "Read", input: { file_path: "math.mjs" } }] };
    case 1:
      return {
        content: [
          { type: "text", text: "add subtracts; fixing it." },
          {
            type: "tool_use",
            name: "Edit",
            input: { file_path: "math.mjs", old_string: "return a - b;", new_string: "return a + b;" },
          },
        ],
      };
    case 2:
      return { content: [{ type: "tool_use", name: "Bash", input: { command: "node check.mjs" } }] };
    default:
      return {
        content: [{ type: "text", text: `Done. The check printed: ${result?.content.trim() ?? "nothing"}` }],
      };
  }
}

describe("a coding session end to end (forkloop run → loop → tools → simulator)", () => {
  let dir: string;
  let sim: Simulator;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "forkloop-coding-"));
    await writeFile(join(dir, "math.mjs"), BUGGY);
    await writeFile(join(dir, "check.mjs"), CHECK);
    sim = await startSimulator({ brain: codingBrain });
  });

  afterEach(async () => {
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("R-T1/R-P1: reads, edits (acceptEdits), runs an allowed Bash check and reports its output", async () => {
    const run = await runCli(
      [
        "run",
        "Fix add() in math.mjs and run check.mjs",
        "--permission-mode",
        "acceptEdits",
        "--allowed-tools",
        "Bash(node check.mjs)",
        "--output-format",
        "json",
      ],
      { cwd: dir, env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: sim.url } },
    );

    expect(run.stderr).not.toMatch(/error/i);
    expect(run.code).toBe(0);
    expect(await readFile(join(dir, "math.mjs"), "utf8")).toContain("return a + b;");
    const result = JSON.parse(run.stdout) as { result: string; num_turns: number; is_error: boolean };
    expect(result.is_error).toBe(false);
    expect(result.result).toContain("check ok");
    const calls = sim.requests().filter((record) => record.path === "/v1/messages" && record.status === 200);
    expect(calls.length).toBeGreaterThanOrEqual(4);
  });

  it("R-P1: without the allow rule the headless run denies Bash and the model is told so", async () => {
    const run = await runCli(
      ["run", "Fix add() and run the check", "--permission-mode", "acceptEdits", "--output-format", "json"],
      { cwd: dir, env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: sim.url } },
    );

    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout) as { result: string; permission_denials: { tool_name: string }[] };
    expect(result.permission_denials.map((denial) => denial.tool_name)).toContain("Bash");
    expect(result.result).not.toContain("check ok");
    // The denial reached the model as an is_error tool_result, not as a crash.
    const last = sim
      .requests()
      .filter((record) => record.path === "/v1/messages")
      .at(-1);
    const body = JSON.parse(last?.rawBody ?? "{}") as { messages: { content: unknown }[] };
    const results = body.messages.flatMap((message) =>
      Array.isArray(message.content) ? message.content : [],
    );
    expect(results).toContainEqual(expect.objectContaining({ type: "tool_result", is_error: true }));
  });
});
