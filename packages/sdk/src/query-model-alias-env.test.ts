import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BrainReply, BrainRequest } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { query } from "./query.js";
import { collectMessages, startHarness } from "./test-support/sdk-harness.js";

// R-X2: Claude Code resolves its aliases through ANTHROPIC_DEFAULT_{OPUS,SONNET,HAIKU}_MODEL
// wherever one names a model: the session's model, an Agent call's `model`, an agent's definition
// (in code or in a file). Over the simulator, with the variables in query()'s `env`.
const PINNED = {
  ANTHROPIC_DEFAULT_SONNET_MODEL: "claude-sonnet-4-6",
  ANTHROPIC_DEFAULT_HAIKU_MODEL: "claude-haiku-4-5-20251001",
  ANTHROPIC_DEFAULT_OPUS_MODEL: "claude-opus-4-8",
};

const CALLS = [
  { description: "Quick", prompt: "Task H.", subagent_type: "general-purpose", model: "haiku" },
  { description: "Deep", prompt: "Task O.", subagent_type: "deep" },
  { description: "Filed", prompt: "Task F.", subagent_type: "filed" },
];

function brain(request: BrainRequest): BrainReply | undefined {
  if (request.querySource === "sdk") {
    if (request.turnIndex > 0) return { content: [{ type: "text", text: "done" }] };
    return { content: CALLS.map((input) => ({ type: "tool_use" as const, name: "Agent", input })) };
  }
  if (request.querySource?.startsWith("agent:")) return { content: [{ type: "text", text: "report" }] };
  return undefined;
}

let harness: Awaited<ReturnType<typeof startHarness>>;
beforeAll(async () => {
  harness = await startHarness(brain);
  mkdirSync(join(harness.dir, ".claude", "agents"), { recursive: true });
  writeFileSync(
    join(harness.dir, ".claude", "agents", "filed.md"),
    "---\nname: filed\ndescription: An agent from a file\nmodel: sonnet\n---\nYou answer from a file.\n",
  );
});
afterAll(async () => harness?.close());

/** The model of the first request that carries `text` and comes from `source` (a prefix). */
function modelOf(source: string, text?: string): string | undefined {
  const record = harness.sim
    .requests()
    .find(
      (r) =>
        r.querySource?.startsWith(source) === true &&
        (text === undefined || r.rawBody.includes(text)) &&
        r.status === 200,
    );
  return record === undefined ? undefined : (JSON.parse(record.rawBody) as { model: string }).model;
}

describe("R-X2: the family model variables", () => {
  it("R-X2: ANTHROPIC_DEFAULT_{SONNET,HAIKU,OPUS}_MODEL in the run's env name the model of the session's alias, an Agent call's model and agent definitions' (code and files)", async () => {
    const base = harness.options();
    await collectMessages(
      query({
        prompt: "Start the helpers.",
        options: harness.options({
          model: "sonnet",
          env: { ...base.env, ...PINNED },
          agents: { deep: { description: "Thinks hard", prompt: "You think hard.", model: "opus" } },
        }),
      }),
    );
    expect(modelOf("sdk")).toBe("claude-sonnet-4-6");
    expect(modelOf("agent:", "Task H.")).toBe("claude-haiku-4-5-20251001");
    expect(modelOf("agent:deep", "Task O.")).toBe("claude-opus-4-8");
    expect(modelOf("agent:filed", "Task F.")).toBe("claude-sonnet-4-6");
  });
});
