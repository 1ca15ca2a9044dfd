import { describe, expect, it } from "vitest";
import { describeIssues } from "./batch-setting-checks.js";
import type { BatchSpec } from "./batch-store.js";
import { itemJobDataSchema, type QueuedBatch, queuedBatchSchema } from "./queue-store.js";
import { batchRefusal } from "./worker-policy.js";

/** A queued batch as `forkloop batch --queue` stores it. */
const spec: BatchSpec = {
  id: "b-20261201-1200-abc123",
  createdAt: "2026-12-01T12:00:00.000Z",
  cwd: "/home/someone/project",
  source: { kind: "items", path: "/home/someone/project/items.jsonl" },
  prompt: "Answer {{item}}",
  model: "claude-sonnet-4-6",
  maxTurns: 8,
  allowedTools: ["Read", "Bash(npm test:*)", "Edit(src/**)", "mcp__db__query"],
  disallowedTools: ["Bash(rm:*)"],
  permissionMode: "dontAsk",
  fallbackModels: ["anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet-v2@20241022"],
  outputDir: "/home/someone/project/out",
  loop: { thinking: { type: "enabled", budget_tokens: 2048 }, toolUseSummaryModel: "claude-haiku-4-5" },
};
const batch = { spec, attempts: 3, backoffMs: 1000, rpm: 60 };

/** Why `queuedBatchSchema` refuses the batch with `change` applied (undefined: it accepts it). */
function problemWith(change: Record<string, unknown>, top: Record<string, unknown> = {}): string | undefined {
  const parsed = queuedBatchSchema.safeParse({ ...batch, ...top, spec: { ...spec, ...change } });
  return parsed.success ? undefined : describeIssues(parsed.error);
}

describe("R-B1 (trust): a queued batch's stored settings are checked as hostile input", () => {
  it("the settings forkloop batch stores pass", () => {
    expect(problemWith({})).toBeUndefined();
  });

  it.each([
    ["an unknown permission mode", { permissionMode: "yolo" }, "spec.permissionMode: must be one of default"],
    ["a huge maxTurns", { maxTurns: 1_000_000_000 }, "spec.maxTurns"],
    ["maxTurns 0", { maxTurns: 0 }, "spec.maxTurns"],
    ["a fractional maxTurns", { maxTurns: 2.5 }, "spec.maxTurns"],
    ["an allow rule that is not a rule", { allowedTools: ["Bash(npm test:*"] }, "spec.allowedTools.0"],
    ["an empty deny rule", { disallowedTools: [""] }, "spec.disallowedTools.0: Empty permission rule"],
    ["a rule with a control character", { allowedTools: ["Bash(ls\u001b[2J)"] }, "control characters"],
    [
      "a rule list too long to match cheaply",
      { allowedTools: Array(1001).fill("Read") },
      "at most 1000 rules",
    ],
    ["a model with spaces", { model: "claude sonnet" }, "spec.model: must be a model id"],
    ["a model with a terminal escape", { model: "claude\u001b]0;owned\u0007" }, "spec.model"],
    ["an empty model", { model: "" }, "spec.model"],
    ["a fallback model with a newline", { fallbackModels: ["claude\nFAILED"] }, "spec.fallbackModels.0"],
    [
      "a summary model that is not an id",
      { loop: { toolUseSummaryModel: "$(id)" } },
      "spec.loop.toolUseSummaryModel",
    ],
    [
      "a thinking budget of a billion tokens",
      { loop: { thinking: { type: "enabled", budget_tokens: 1e9 } } },
      "spec.loop.thinking",
    ],
    ["a batch id that is a path", { id: "../../etc" }, "spec.id"],
    ["a permission mode of the wrong type", { permissionMode: ["bypassPermissions"] }, "spec.permissionMode"],
  ])("%s is refused, the problem named", (_what, change, named) => {
    expect(problemWith(change)).toContain(named);
  });

  it.each([
    ["attempts beyond --attempts' bound", { attempts: 1e6 }, "attempts"],
    ["a negative retry delay", { backoffMs: -1 }, "backoffMs"],
    ["rpm 0", { rpm: 0 }, "rpm"],
  ])("%s is refused", (_what, top, named) => {
    expect(problemWith({}, top)).toContain(named);
  });

  it("keys the worker does not know (a batch's own sandbox, say) are dropped, never applied", () => {
    const parsed = queuedBatchSchema.parse({ ...batch, sandbox: "off", spec: { ...spec, sandbox: "off" } });
    expect(parsed).not.toHaveProperty("sandbox");
    expect(parsed.spec).not.toHaveProperty("sandbox");
  });

  it("an item job's item id is an id, not a path (it names the item's transcript file)", () => {
    const job = (id: string) => ({ batchId: spec.id, item: { id, label: "x", prompt: "p" } });
    expect(itemJobDataSchema.safeParse(job("0123456789abcdef")).success).toBe(true);
    expect(itemJobDataSchema.safeParse(job("../../../.bashrc")).success).toBe(false);
    expect(itemJobDataSchema.safeParse(job("a/b")).success).toBe(false);
    expect(itemJobDataSchema.safeParse({ ...job("ok"), batchId: "x:y" }).success).toBe(false);
  });
});

describe("R-B1 (trust): the worker's policy on bypassPermissions", () => {
  const bypass: QueuedBatch = { ...batch, spec: { ...spec, permissionMode: "bypassPermissions" } };

  it("refused without the operator's opt-in, naming the flag", () => {
    expect(batchRefusal(bypass, { allowBypassPermissions: false })).toContain(
      "--allow-dangerously-skip-permissions",
    );
  });

  it("run with the opt-in; the host's disableBypassPermissionsMode refuses it even then", () => {
    expect(batchRefusal(bypass, { allowBypassPermissions: true })).toBeUndefined();
    expect(batchRefusal(bypass, { allowBypassPermissions: true, bypassDisabledBySettings: true })).toContain(
      "disableBypassPermissionsMode",
    );
  });

  it.each(["default", "acceptEdits", "plan", "dontAsk", "auto"] as const)(
    "a %s batch is run by a cautious worker",
    (mode) => {
      const other: QueuedBatch = { ...batch, spec: { ...spec, permissionMode: mode } };
      expect(batchRefusal(other, { allowBypassPermissions: false })).toBeUndefined();
    },
  );
});
