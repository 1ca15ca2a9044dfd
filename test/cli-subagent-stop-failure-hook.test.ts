import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliInProcess } from "@forkloop/cli/testing";
import { type BrainReply, type BrainRequest, startSimulator } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// R-X1, R-K2: a run that ends on an API error fires the settings' StopFailure hooks as Claude Code
// 2.1.332 does (claude-cli scenarios hooks-subagent-api-error, hooks-stop-failure-invalid-request):
// a sub-agent's with its agent_id and agent_type, a plain 400 named "unknown", with the turn's
// effort.
const say = (text: string): BrainReply => ({ content: [{ type: "text", text }], adaptiveThinking: false });

function brain(request: BrainRequest): BrainReply {
  if (request.querySource?.startsWith("agent:")) return { ...say("unused"), fault: "400" };
  if ((request.lastUserText ?? "").includes("Fail now.")) return { ...say("unused"), fault: "400" };
  if (request.turnIndex === 0)
    return {
      content: [
        {
          type: "tool_use",
          name: "Agent",
          input: { description: "Read notes", prompt: "Read notes.txt.", subagent_type: "general-purpose" },
        },
      ],
      adaptiveThinking: false,
    };
  return say("The helper failed.");
}

let dir: string;
let home: string;
let sim: Awaited<ReturnType<typeof startSimulator>>;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-subagent-stop-failure-"));
  home = await mkdtemp(join(tmpdir(), "forkloop-subagent-stop-failure-home-"));
  await mkdir(join(home, ".claude"), { recursive: true });
  const log = (name: string) => [
    {
      hooks: [
        { type: "command", command: `cat >> "${home}/${name}.jsonl"; echo >> "${home}/${name}.jsonl"` },
      ],
    },
  ];
  await writeFile(
    join(home, ".claude", "settings.json"),
    JSON.stringify({ hooks: { StopFailure: log("failure"), SubagentStop: log("subagent-stop") } }),
  );
  sim = await startSimulator({ brain });
});
afterAll(async () => {
  await sim?.close();
  await rm(dir, { recursive: true, force: true });
  await rm(home, { recursive: true, force: true });
});

const run = (prompt: string) =>
  runCliInProcess(["-p", prompt, "--output-format", "json"], {
    cwd: dir,
    env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: sim.url, HOME: home, FORKLOOP_HOME: home },
  });
const lines = async (name: string) =>
  (await readFile(join(home, `${name}.jsonl`), "utf8").catch(() => ""))
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe("R-X1, R-K2: settings StopFailure hooks", () => {
  it("R-X1, R-K2: a sub-agent whose request the API refuses (400) fires the settings' StopFailure with its agent_id and agent_type, error unknown, the text shown and the effort, not SubagentStop; a main turn's 400 is unknown too", async () => {
    const helped = await run("Have a helper read notes.txt.");
    expect(helped.code, helped.stderr).toBe(0);
    const result = JSON.parse(helped.stdout) as { session_id: string };
    const [failure, ...others] = await lines("failure");
    expect(others).toEqual([]);
    expect(failure).toEqual({
      session_id: result.session_id,
      transcript_path: expect.any(String),
      cwd: dir,
      prompt_id: expect.any(String),
      agent_id: expect.stringMatching(/^agent-/),
      agent_type: "general-purpose",
      effort: { level: expect.any(String) },
      hook_event_name: "StopFailure",
      error: "unknown",
      last_assistant_message: "API Error: 400 Invalid request",
    });
    expect(await lines("subagent-stop")).toEqual([]);

    const failed = await run("Fail now.");
    expect(failed.code).not.toBe(0);
    const main = (await lines("failure"))[1];
    expect(main).toMatchObject({
      hook_event_name: "StopFailure",
      error: "unknown",
      effort: { level: expect.any(String) },
    });
    expect(main).not.toHaveProperty("agent_id");
  });
});
