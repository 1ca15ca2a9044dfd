/**
 * R-L14 token budget ("+500k"): whether a model that ended its turn should be nudged to keep
 * going. Pure: the loop keeps the tracker in its state. Distinct from the API task budget (R-L3).
 */
export interface BudgetTracker {
  readonly continuationCount: number;
  /** Tokens added by the previous continuation (undefined before the first). */
  readonly lastDeltaTokens: number | undefined;
  /** Turn tokens at the previous check. */
  readonly lastTurnTokens: number;
}

export const INITIAL_BUDGET_TRACKER: BudgetTracker = {
  continuationCount: 0,
  lastDeltaTokens: undefined,
  lastTurnTokens: 0,
};

/** Continue while below 90% of the budget. */
const BUDGET_COMPLETION_THRESHOLD = 0.9;
/** A continuation adding fewer tokens than this counts as "no progress". */
const DIMINISHING_RETURNS_TOKENS = 500;
/** Diminishing returns are judged only after this many continuations. */
const DIMINISHING_RETURNS_MIN_CONTINUATIONS = 3;

export type BudgetDecision =
  | { readonly action: "continue"; readonly tracker: BudgetTracker; readonly nudge: string }
  | {
      readonly action: "stop";
      readonly reason: "no_budget" | "sub_agent" | "reached" | "diminishing_returns";
    };

export function checkTokenBudget(input: {
  readonly tracker: BudgetTracker;
  /** Sub-agents never continue on a budget: their parent owns the user's request. */
  readonly isSubAgent: boolean;
  readonly budget: number | undefined;
  /** Output tokens produced so far in this user turn. */
  readonly turnTokens: number;
}): BudgetDecision {
  const { tracker, budget, turnTokens } = input;
  if (budget === undefined || budget <= 0) return { action: "stop", reason: "no_budget" };
  if (input.isSubAgent) return { action: "stop", reason: "sub_agent" };
  const delta = turnTokens - tracker.lastTurnTokens;
  if (
    tracker.continuationCount >= DIMINISHING_RETURNS_MIN_CONTINUATIONS &&
    delta < DIMINISHING_RETURNS_TOKENS &&
    tracker.lastDeltaTokens !== undefined &&
    tracker.lastDeltaTokens < DIMINISHING_RETURNS_TOKENS
  ) {
    return { action: "stop", reason: "diminishing_returns" };
  }
  if (turnTokens >= BUDGET_COMPLETION_THRESHOLD * budget) return { action: "stop", reason: "reached" };
  const percent = Math.round((turnTokens / budget) * 100);
  return {
    action: "continue",
    tracker: {
      continuationCount: tracker.continuationCount + 1,
      lastDeltaTokens: tracker.continuationCount === 0 ? undefined : delta,
      lastTurnTokens: turnTokens,
    },
    nudge:
      `Token budget: ${turnTokens.toLocaleString("en-US")} of ${budget.toLocaleString("en-US")} tokens used ` +
      `(${percent}%), ${(budget - turnTokens).toLocaleString("en-US")} remaining. Keep working on the task; ` +
      "do not summarize or stop early.",
  };
}
