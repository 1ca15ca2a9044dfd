import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliInProcess, streamJsonLines } from "@forkloop/cli/testing";
import { type BrainReply, type BrainRequest, startSimulator } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Long and parallel work through the CLI on the simulator (R-T4, R-T5): a test run in the
 * background while a background sub-agent reviews a file; the parent is told of each as it ends.
 */
const call = (content: BrainReply["content"]): BrainReply => ({ content, adaptiveThinking: false });
const say = (text: string): BrainReply => call([{ type: "text", text }]);

/** The notices the main agent was sent, by the request that carried them. */
const notices: string[] = [];

function brain(request: BrainRequest): BrainReply {
  if (request.querySource?.startsWith("agent:")) {
    if (request.lastToolResults.length > 0) return say("README review: one line, reads fine.");
    return call([{ type: "tool_use", name: "Read", input: { file_path: "README.md" } }]);
  }
  const last = request.lastUserText ?? "";
  if (last.includes("<task-notification>")) {
    notices.push(last);
    return say("noted");
  }
  if (request.turnIndex === 0) {
    return call([
      {
        type: "tool_use",
        name: "Bash",
        input: { command: "sleep 1; echo 12 tests passed", run_in_background: true, description: "test run" },
      },
      {
        type: "tool_use",
        name: "Agent",
        input: {
          description: "review README",
          prompt: "Review README.md.",
          subagent_type: "general-purpose",
          run_in_background: true,
        },
      },
    ]);
  }
  return say("both are running; I will hear when each ends");
}

let dir: string;
let sim: Awaited<ReturnType<typeof startSimulator>>;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-cli-background-work-"));
  await writeFile(join(dir, "README.md"), "a project\n");
  sim = await startSimulator({ brain });
});
afterAll(async () => {
  await sim?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("background work through the CLI (R-T4, R-T5)", () => {
  it("R-T5: a background test run and a background sub-agent run while the turn ends; the parent is notified of each, the sub-agent's with its report", async () => {
    const run = await runCliInProcess(
      [
        "run",
        "run the tests and review the README in the background",
        "--output-format",
        "stream-json",
        "--allowed-tools",
        "Bash,Agent,Read",
        "--sandbox",
        "off",
      ],
      { cwd: dir, env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: sim.url } },
    );
    expect(run.code, run.stderr).toBe(0);
    const lines = streamJsonLines(run.stdout) as {
      type: string;
      subtype?: string;
      status?: string;
      result?: string;
    }[];
    // The first turn ended with both still running: its result is the parent's own words.
    const results = lines.filter((line) => line.type === "result");
    expect(results[0]?.result).toBe("both are running; I will hear when each ends");
    const told = notices.join("\n");
    expect(told).toMatch(/<task-id>b\w+<\/task-id>[\s\S]*?<summary>Background command "test run" completed/);
    expect(told).toMatch(/<task-id>agent-\w+<\/task-id>[\s\S]*?<summary>Agent "review README" completed/);
    expect(told).toContain("<result>README review: one line, reads fine.");
    expect(lines.some((line) => line.type === "system" && line.subtype === "task_notification")).toBe(true);
    expect(results.at(-1)?.result).toBe("noted");
  });
});
