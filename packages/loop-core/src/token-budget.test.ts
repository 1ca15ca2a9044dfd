import { describe, expect, it } from "vitest";
import { type BudgetTracker, checkTokenBudget, INITIAL_BUDGET_TRACKER } from "./token-budget.js";

describe("checkTokenBudget", () => {
  const tracker = (continuationCount: number, lastDeltaTokens: number | undefined, lastTurnTokens: number) =>
    ({ continuationCount, lastDeltaTokens, lastTurnTokens }) satisfies BudgetTracker;

  it.each([
    ["no budget", INITIAL_BUDGET_TRACKER, false, undefined, 100, "stop"],
    ["R-L14: sub-agents never continue", INITIAL_BUDGET_TRACKER, true, 10_000, 100, "stop"],
    ["R-L14: below 90% continues", INITIAL_BUDGET_TRACKER, false, 10_000, 8_999, "continue"],
    ["R-L14: at 90% stops", INITIAL_BUDGET_TRACKER, false, 10_000, 9_000, "stop"],
    [
      "R-L14: diminishing returns after 3 continuations",
      tracker(3, 100, 5_000),
      false,
      100_000,
      5_200,
      "stop",
    ],
    [
      "R-L14: 3 continuations but progress continues",
      tracker(3, 100, 5_000),
      false,
      100_000,
      6_000,
      "continue",
    ],
    ["R-L14: one slow continuation is not enough", tracker(3, 900, 5_000), false, 100_000, 5_200, "continue"],
    ["R-L14: slow but only 2 continuations", tracker(2, 100, 5_000), false, 100_000, 5_200, "continue"],
  ] as const)("%s", (_name, state, isSubAgent, budget, turnTokens, action) => {
    expect(checkTokenBudget({ tracker: state, isSubAgent, budget, turnTokens }).action).toBe(action);
  });

  it("R-L14: the nudge states the remaining budget and the tracker advances", () => {
    const decision = checkTokenBudget({
      tracker: INITIAL_BUDGET_TRACKER,
      isSubAgent: false,
      budget: 500_000,
      turnTokens: 1_000,
    });
    expect(decision.action).toBe("continue");
    if (decision.action !== "continue") return;
    expect(decision.nudge).toContain("499,000 remaining");
    expect(decision.tracker).toEqual({
      continuationCount: 1,
      lastDeltaTokens: undefined,
      lastTurnTokens: 1_000,
    });
  });
});
