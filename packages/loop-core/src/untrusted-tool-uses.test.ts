import Anthropic from "@anthropic-ai/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { createUserMessage } from "./create-message.js";
import type { ToolUseBlock } from "./messages.js";
import { query } from "./query.js";
import { FAST_RETRY } from "./test-support/sim-harness.js";
import {
  collect,
  type HostileBehaviour,
  type HostileServer,
  startHostileServer,
  testContext,
  testTool,
} from "./testing/index.js";
import { MAX_TOOL_INPUT_DEPTH, screenToolUse, toolUseRejection } from "./untrusted-tool-uses.js";

const nested = (depth: number): Record<string, unknown> => {
  let value: Record<string, unknown> = { leaf: 1 };
  for (let level = 1; level < depth; level++) value = { a: value };
  return value;
};
const block = (id: unknown, input: unknown): ToolUseBlock =>
  ({ type: "tool_use", id, name: "Probe", input }) as unknown as ToolUseBlock;

describe("R-R3: tool_use blocks are screened before anything runs them", () => {
  it.each([
    ["a fresh id and a shallow input", "toolu_1", { path: "a" }, undefined],
    ["an id used earlier in the conversation", "toolu_seen", {}, /Duplicate tool_use id toolu_seen/],
    ["an id the API would refuse", "bad id!", {}, /Invalid tool_use id/],
    ["a missing id", undefined, {}, /Invalid tool_use id/],
    [`input nested ${MAX_TOOL_INPUT_DEPTH} levels`, "toolu_2", nested(MAX_TOOL_INPUT_DEPTH), undefined],
    [
      `input nested ${MAX_TOOL_INPUT_DEPTH + 1} levels`,
      "toolu_3",
      nested(MAX_TOOL_INPUT_DEPTH + 1),
      /nested deeper than 64/,
    ],
    ["input nested 100,000 levels", "toolu_4", nested(100_000), /nested deeper than 64/],
    ["an input that is no object", "toolu_5", [1, 2], /must be a JSON object/],
  ])("%s", (_name, id, input, rejection) => {
    const seen = new Set(["toolu_seen"]);
    const screened = block(id, input);
    screenToolUse(screened, seen);
    if (rejection === undefined) {
      expect(toolUseRejection(screened)).toBeUndefined();
      expect(screened.id).toBe(id);
      expect(screened.input).toBe(input);
    } else {
      expect(toolUseRejection(screened)).toMatch(rejection);
      // Repaired so the history stays valid: a fresh unique id for a bad one, a shallow input.
      if (/tool_use id/.test(rejection.source)) expect(screened.id).toMatch(/^toolu_forkloop_[0-9a-f]{24}$/);
      else expect(screened.id).toBe(id);
      expect(JSON.stringify(screened.input).length).toBeLessThan(1000);
    }
    expect(seen.has(screened.id)).toBe(true);
  });
});

describe("R-R1–R-R3: a hostile model's tool calls, through the loop", () => {
  const servers: HostileServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  async function run(first: HostileBehaviour) {
    let calls = 0;
    const probe = testTool({
      name: "Probe",
      call: async () => {
        calls++;
        return { content: "probed" };
      },
    });
    // Turn 1: a valid Probe call (its id is what the hostile reply reuses); turn 2: the attack.
    const server = await startHostileServer({
      behaviour: ({ index }) => (index === 2 ? first : { kind: "ok" }),
      toolUse: { name: "Probe", input: {} },
    });
    servers.push(server);
    const { terminal } = await collect(
      query({
        messages: [createUserMessage("Probe twice.")],
        systemPrompt: "You are a test agent.",
        toolUseContext: testContext({ tools: [probe] }),
        querySource: "sdk",
        client: new Anthropic({ apiKey: "test-key", baseURL: server.url, maxRetries: 0 }),
        retry: FAST_RETRY,
        maxTurns: 3,
      }),
    );
    const results = terminal.messages.flatMap((message) =>
      message.type === "user" && Array.isArray(message.message.content)
        ? message.message.content.flatMap((part) => (part.type === "tool_result" ? [part] : []))
        : [],
    );
    return { terminal, server, calls: () => calls, results };
  }

  it("duplicate ids: the first call runs once, the duplicates get is_error results, the API rules hold", async () => {
    const { terminal, server, calls, results } = await run({ kind: "duplicate_ids" });
    expect(terminal.reason).toBe("completed");
    // Turn 1's call, then of [dup, dup, reused-id] only the first runs.
    expect(calls()).toBe(2);
    expect(results.filter((result) => result.is_error)).toHaveLength(2);
    expect(results.filter((result) => JSON.stringify(result).includes("Duplicate tool_use id"))).toHaveLength(
      2,
    );
    expect(new Set(results.map((result) => result.tool_use_id)).size).toBe(results.length);
    for (const record of server.requests()) expect(record.violations).toEqual([]);
  });

  it("an input nested 5,000 levels deep is rejected as invalid input: no crash, nothing runs", async () => {
    const { terminal, server, calls, results } = await run({ kind: "deep_input", depth: 5_000 });
    expect(terminal.reason).toBe("completed");
    expect(calls()).toBe(1);
    expect(results.at(-1)).toMatchObject({ is_error: true });
    expect(JSON.stringify(results.at(-1))).toContain("nested deeper than 64 levels");
    for (const record of server.requests()) expect(record.violations).toEqual([]);
  });
});
