import { describe, expect, it } from "vitest";
import { NO_REACTIVE_COMPACT_ATTEMPTED } from "./loop-state.js";
import { type StepConfig, type StepEvent, type StepState, step } from "./loop-step.js";
import type { StopHooksResult } from "./stop-hooks.js";
import { CONTINUE_REASONS, type ContinueReason, type TerminalReason } from "./terminal.js";

const fresh: StepState = {
  transition: undefined,
  reactiveCompactAttempted: NO_REACTIVE_COMPACT_ATTEMPTED,
  maxOutputTokensOverride: undefined,
  maxOutputTokensRecoveryCount: 0,
  turnCount: 1,
  pauseTurnContinuations: 0,
};
const config: StepConfig = { maxTurns: 3, defaultMaxOutputTokens: 8_000, escalatedMaxOutputTokens: 64_000 };
const noStop: StopHooksResult = {
  preventContinuation: false,
  stopReason: undefined,
  blockingErrors: [],
  blockingHooks: [],
};
const blocking: StopHooksResult = { ...noStop, blockingErrors: ["lint: 3 errors"], blockingHooks: [0] };
const endTurn = { type: "end_turn", stop: noStop, budget: { action: "stop", reason: "no_budget" } } as const;
const underBudget = {
  action: "continue",
  nudge: "Keep working.",
  tracker: { continuationCount: 1, lastDeltaTokens: undefined, lastTurnTokens: 100 },
} as const;

interface Row {
  readonly name: string;
  readonly state?: Partial<StepState>;
  readonly config?: Partial<StepConfig>;
  readonly event: StepEvent;
  readonly expected: ContinueReason | TerminalReason;
}

const rows: readonly Row[] = [
  // R-L10: prompt too long — drain → reactive compact → surface.
  {
    name: "prompt too long, first time",
    event: { type: "withheld", kind: "prompt_too_long" },
    expected: "collapse_drain_retry",
  },
  {
    name: "prompt too long right after a drain: no second drain in a row",
    state: { transition: { reason: "collapse_drain_retry" } },
    event: { type: "withheld", kind: "prompt_too_long" },
    expected: "reactive_compact_retry",
  },
  {
    name: "prompt too long, nothing to drain",
    event: { type: "withheld", kind: "prompt_too_long", failed: ["collapse_drain_retry"] },
    expected: "reactive_compact_retry",
  },
  {
    name: "prompt too long, its reactive compact already used (R-L11)",
    state: { reactiveCompactAttempted: { prompt_too_long: true, media: false } },
    event: { type: "withheld", kind: "prompt_too_long", failed: ["collapse_drain_retry"] },
    expected: "prompt_too_long",
  },
  {
    name: "prompt too long, reactive compact could not",
    event: {
      type: "withheld",
      kind: "prompt_too_long",
      failed: ["collapse_drain_retry", "reactive_compact_retry"],
    },
    expected: "prompt_too_long",
  },
  // R-L10: media — reactive compact → surface; its guard is its own.
  {
    name: "media error, first time",
    event: { type: "withheld", kind: "media" },
    expected: "reactive_compact_retry",
  },
  {
    name: "media error after a prompt-too-long compact: the media guard is separate",
    state: { reactiveCompactAttempted: { prompt_too_long: true, media: false } },
    event: { type: "withheld", kind: "media" },
    expected: "reactive_compact_retry",
  },
  {
    name: "media error, its reactive compact already used",
    state: { reactiveCompactAttempted: { prompt_too_long: false, media: true } },
    event: { type: "withheld", kind: "media" },
    expected: "image_error",
  },
  // R-L10: output cap — 8K → 64K once → 3 recoveries → model_error.
  {
    name: "cut at 8K",
    event: { type: "withheld", kind: "max_output_tokens" },
    expected: "max_output_tokens_escalate",
  },
  {
    name: "cut at 64K",
    state: { maxOutputTokensOverride: 64_000 },
    event: { type: "withheld", kind: "max_output_tokens" },
    expected: "max_output_tokens_recovery",
  },
  {
    name: "cut with a default cap already at the escalated one",
    config: { defaultMaxOutputTokens: 64_000 },
    event: { type: "withheld", kind: "max_output_tokens" },
    expected: "max_output_tokens_recovery",
  },
  {
    name: "cut after 3 recoveries (R-L11)",
    state: { maxOutputTokensOverride: 64_000, maxOutputTokensRecoveryCount: 3 },
    event: { type: "withheld", kind: "max_output_tokens" },
    expected: "model_error",
  },
  // R-L15 then R-L14 on a reply without tool calls.
  { name: "end turn, nothing else to do", event: endTurn, expected: "completed" },
  {
    name: "a stop hook prevents continuation (wins over blocking)",
    event: { ...endTurn, stop: { ...blocking, preventContinuation: true } },
    expected: "stop_hook_prevented",
  },
  {
    name: "a stop hook blocks (wins over the budget)",
    event: { ...endTurn, stop: blocking, budget: underBudget },
    expected: "stop_hook_blocking",
  },
  {
    name: "under the token budget",
    event: { ...endTurn, budget: underBudget },
    expected: "token_budget_continuation",
  },
  // After the tools.
  { name: "tools answered", event: { type: "tools_done", hookStop: undefined }, expected: "next_turn" },
  {
    name: "a hook said continue:false",
    event: { type: "tools_done", hookStop: { reason: "the audit hook stopped the run" } },
    expected: "hook_stopped",
  },
  {
    name: "the next call would exceed maxTurns (R-L19)",
    state: { turnCount: 3 },
    event: { type: "tools_done", hookStop: undefined },
    expected: "max_turns",
  },
  {
    name: "no maxTurns",
    state: { turnCount: 300 },
    config: { maxTurns: undefined },
    event: { type: "tools_done", hookStop: undefined },
    expected: "next_turn",
  },
  // A pause_turn reply is continued, a bounded number of times.
  { name: "the server paused the turn", event: { type: "paused" }, expected: "pause_turn_continuation" },
  {
    name: "the server paused the turn again after 10 continuations",
    state: { pauseTurnContinuations: 10 },
    event: { type: "paused" },
    expected: "model_error",
  },
  {
    name: "a paused turn whose continuation would exceed maxTurns (R-L19)",
    state: { turnCount: 3 },
    event: { type: "paused" },
    expected: "max_turns",
  },
];

describe("R-L13: step(state, event, config), the pure continue decision", () => {
  it.each(rows)("$name → $expected", (row) => {
    const decision = step({ ...fresh, ...row.state }, row.event, { ...config, ...row.config });
    expect(decision.reason).toBe(row.expected);
    expect(decision.type).toBe(
      (CONTINUE_REASONS as readonly string[]).includes(row.expected) ? "continue" : "terminal",
    );
  });

  it("R-L7: the table reaches every continue reason (R-L7's 7 and the pause_turn_continuation) and the 7 terminals decided after a reply", () => {
    const reached = new Set(rows.map((row) => row.expected));
    for (const reason of CONTINUE_REASONS) expect(reached).toContain(reason);
    const terminals: TerminalReason[] = [
      "completed",
      "stop_hook_prevented",
      "hook_stopped",
      "max_turns",
      "prompt_too_long",
      "image_error",
      "model_error",
    ];
    for (const reason of terminals) expect(reached).toContain(reason);
  });

  it("the decision carries its payload — a blocking hook's feedback and index, the budget's nudge and tracker, a stopping hook's error", () => {
    expect(step(fresh, { ...endTurn, stop: blocking, budget: underBudget }, config)).toEqual({
      type: "continue",
      reason: "stop_hook_blocking",
      feedback: "Stop hook feedback:\nlint: 3 errors",
      blockingHooks: [0],
    });
    expect(step(fresh, { ...endTurn, budget: underBudget }, config)).toEqual({
      type: "continue",
      reason: "token_budget_continuation",
      nudge: underBudget.nudge,
      tracker: underBudget.tracker,
    });
    expect(step(fresh, { ...endTurn, stop: { ...noStop, preventContinuation: true } }, config)).toEqual({
      type: "terminal",
      reason: "stop_hook_prevented",
      error: { type: "stop_hook_prevented", message: "A stop hook prevented continuation" },
    });
    expect(step(fresh, { type: "tools_done", hookStop: { reason: "audit failed" } }, config)).toEqual({
      type: "terminal",
      reason: "hook_stopped",
      error: { type: "hook_stopped", message: "audit failed" },
    });
  });

  it("R-L5: step reads the state and never changes it", () => {
    const state = Object.freeze({ ...fresh });
    for (const row of rows) step(state, row.event, config);
    expect(state).toEqual(fresh);
  });
});
