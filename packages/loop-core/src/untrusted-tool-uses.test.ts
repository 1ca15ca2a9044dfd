import { parseFaultSpec } from "@forkloop/sim";
import { describe, expect, it } from "vitest";
import type { ToolUseBlock } from "./messages.js";
import { query } from "./query.js";
import { simParams, useSimulator } from "./test-support/sim-harness.js";
import { collect, testTool, toolPairingViolations } from "./testing/index.js";
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
  const sims = useSimulator();

  /** `attack`: the simulator's fault on request 2 (its --faults syntax). */
  async function run(attack: string) {
    let calls = 0;
    const probe = testTool({
      name: "Probe",
      call: async () => {
        calls++;
        return { content: "probed" };
      },
    });
    // Turn 1: a valid Probe call (its id is what the hostile reply reuses); turn 2: the attack on
    // the same call; turn 3 answers.
    const handle = await sims.start(
      (request) =>
        request.turnIndex >= 2
          ? { content: [{ type: "text", text: "done" }] }
          : { content: [{ type: "tool_use", name: "Probe", input: {} }] },
      { faults: parseFaultSpec(attack) },
    );
    const { terminal } = await collect(
      query({ ...simParams(handle, { prompt: "Probe twice.", tools: [probe] }), maxTurns: 3 }),
    );
    const results = terminal.messages.flatMap((message) =>
      message.type === "user" && Array.isArray(message.message.content)
        ? message.message.content.flatMap((part) => (part.type === "tool_result" ? [part] : []))
        : [],
    );
    // What the loop sent: the API's tool rules kept (the simulator would have answered a breach
    // with a 400, too), and the attack did reach it.
    const records = handle.messageRequests();
    const violations = () =>
      records.flatMap((record) => toolPairingViolations(JSON.parse(record.rawBody).messages));
    return { terminal, records, violations, calls: () => calls, results };
  }

  it("duplicate ids: the first call runs once, the duplicates get is_error results, the API rules hold", async () => {
    const { terminal, records, violations, calls, results } = await run("duplicate_ids@2");
    expect(terminal.reason).toBe("completed");
    // Turn 1's call, then of [dup, dup, reused-id] only the first runs.
    expect(calls()).toBe(2);
    expect(results.filter((result) => result.is_error)).toHaveLength(2);
    expect(results.filter((result) => JSON.stringify(result).includes("Duplicate tool_use id"))).toHaveLength(
      2,
    );
    expect(new Set(results.map((result) => result.tool_use_id)).size).toBe(results.length);
    expect(violations()).toEqual([]);
    expect(records.map((record) => [record.fault, record.error])).toEqual([
      [null, null],
      ["duplicate_ids", null],
      [null, null],
    ]);
  });

  it("an input nested 5,000 levels deep is rejected as invalid input: no crash, nothing runs", async () => {
    const { terminal, records, violations, calls, results } = await run("deep_input@2:depth=5000");
    expect(terminal.reason).toBe("completed");
    expect(calls()).toBe(1);
    expect(results.at(-1)).toMatchObject({ is_error: true });
    expect(JSON.stringify(results.at(-1))).toContain("nested deeper than 64 levels");
    expect(violations()).toEqual([]);
    expect(records.map((record) => [record.fault, record.error])).toEqual([
      [null, null],
      ["deep_input", null],
      [null, null],
    ]);
  });
});
