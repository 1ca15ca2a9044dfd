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

/** The body of the first request that carries `text` and comes from `source` (a prefix). */
function bodyOf(source: string, text?: string): Record<string, unknown> | undefined {
  const record = harness.sim
    .requests()
    .find(
      (r) =>
        r.querySource?.startsWith(source) === true &&
        (text === undefined || r.rawBody.includes(text)) &&
        r.status === 200,
    );
  return record === undefined ? undefined : (JSON.parse(record.rawBody) as Record<string, unknown>);
}

function modelOf(source: string, text?: string): unknown {
  return bodyOf(source, text)?.model;
}

/** The request parameters the defaults decide. */
function paramsOf(source: string, text?: string): Record<string, unknown> | undefined {
  const body = bodyOf(source, text);
  return body && { max_tokens: body.max_tokens, thinking: body.thinking, output_config: body.output_config };
}

let messages: Awaited<ReturnType<typeof collectMessages>>;
beforeAll(async () => {
  const base = harness.options();
  messages = await collectMessages(
    query({
      prompt: "Start the helpers.",
      options: harness.options({
        model: "sonnet",
        env: { ...base.env, ...PINNED },
        agents: { deep: { description: "Thinks hard", prompt: "You think hard.", model: "opus" } },
      }),
    }),
  );
});

describe("R-X2: the family model variables", () => {
  it("R-X2: ANTHROPIC_DEFAULT_{SONNET,HAIKU,OPUS}_MODEL in the run's env name the model of the session's alias, an Agent call's model and agent definitions' (code and files)", () => {
    expect(modelOf("sdk")).toBe("claude-sonnet-4-6");
    expect(modelOf("agent:", "Task H.")).toBe("claude-haiku-4-5-20251001");
    expect(modelOf("agent:deep", "Task O.")).toBe("claude-opus-4-8");
    expect(modelOf("agent:filed", "Task F.")).toBe("claude-sonnet-4-6");
  });

  // Claude Code 2.1.332's requests in the env-default-model-aliases scenario: the session on
  // claude-sonnet-4-6 asks 32000 and effort high, its haiku sub-agent 32000 with a 31999 budget.
  it("R-X2: the older model a variable names gets Claude Code's defaults for its family, a sub-agent on another model its own model's, and modelUsage's canonicalModel drops the date", () => {
    const adaptive = { type: "adaptive", display: "omitted" };
    expect(paramsOf("sdk")).toEqual({
      max_tokens: 32_000,
      thinking: adaptive,
      output_config: { effort: "high" },
    });
    expect(paramsOf("agent:", "Task H.")).toEqual({
      max_tokens: 32_000,
      thinking: { type: "enabled", budget_tokens: 31_999, display: "omitted" },
      output_config: undefined,
    });
    // A family no scenario has shown, with adaptive thinking: its whole cap, effort medium.
    expect(paramsOf("agent:deep", "Task O.")).toEqual({
      max_tokens: 128_000,
      thinking: adaptive,
      output_config: { effort: "medium" },
    });
    // A sub-agent on the session's model shares its prefix (R-F3): the same parameters.
    expect(paramsOf("agent:filed", "Task F.")).toEqual(paramsOf("sdk"));
    const result = messages.find((m) => m.type === "result") as
      | { modelUsage: Record<string, { canonicalModel: string }> }
      | undefined;
    expect(result?.modelUsage["claude-haiku-4-5-20251001"]?.canonicalModel).toBe("claude-haiku-4-5");
    expect(result?.modelUsage["claude-sonnet-4-6"]?.canonicalModel).toBe("claude-sonnet-4-6");
  });
});
