import { MIN_AUTOCOMPACT_WINDOW_TOKENS, type ThinkingConfigParam } from "@forkloop/loop-core";
import type { Settings } from "@forkloop/tools";
import { OptionsError } from "./options-error.js";

/** What the loop of every agent of a run or batch does beyond the defaults. */
export interface LoopChoices {
  /** R-L17. */
  readonly thinking?: ThinkingConfigParam;
  /** R-L18: the small model that summarizes each tool batch. */
  readonly toolUseSummaryModel?: string;
  /** R-C2 by the API: `clear_tool_uses` at the microcompact stage's lines. */
  readonly contextEditing?: boolean;
  /** R-C7: both context lines are measured from min(context window, this). */
  readonly autoCompactWindow?: number;
}

/**
 * R-X2: whether the options or settings turned thinking off (`thinking: {type: "disabled"}`,
 * `maxThinkingTokens: 0`, `alwaysThinkingEnabled: false`), so query()'s default thinking stays off.
 */
export function thinkingTurnedOff(given: GivenLoopChoices, settings: Settings): boolean {
  if (given.thinking !== undefined) return given.thinking.type === "disabled";
  if (given.maxThinkingTokens !== undefined) return given.maxThinkingTokens === 0;
  if (settings.maxThinkingTokens !== undefined) return settings.maxThinkingTokens === 0;
  return settings.alwaysThinkingEnabled === false;
}

/** The same choices as options or flags give them; each wins over its settings key. */
export interface GivenLoopChoices {
  readonly thinking?: ThinkingConfigParam;
  /** Extended thinking with this budget (≥ 1024); 0 turns thinking off. */
  readonly maxThinkingTokens?: number;
  readonly toolUseSummaryModel?: string;
  readonly contextEditing?: boolean;
  /**
   * R-C7: the auto-compact window in tokens (Claude Code's `--autocompact N`, at least 100k): the
   * auto-compact line and the hard limit are measured from min(model's window, this).
   */
  readonly autoCompactWindow?: number;
}

/** R-C7: a window cap must be a whole number of at least 100k tokens, as Claude Code's. */
function checkAutoCompactWindow(tokens: number, name = "autoCompactWindow"): number {
  if (!Number.isInteger(tokens) || tokens < MIN_AUTOCOMPACT_WINDOW_TOKENS) {
    throw new OptionsError(
      `${name} ${tokens}: give a whole number of tokens of at least ${MIN_AUTOCOMPACT_WINDOW_TOKENS} (the smallest auto-compact window), e.g. 150000.`,
    );
  }
  return tokens;
}

/** The smallest thinking budget the API takes. */
export const MIN_THINKING_TOKENS = 1024;

/** A budget as a thinking config: 0 is off, anything else must be a whole number ≥ 1024. */
export function thinkingForBudget(tokens: number, name = "maxThinkingTokens"): ThinkingConfigParam {
  if (tokens === 0) return { type: "disabled" };
  if (!Number.isInteger(tokens) || tokens < MIN_THINKING_TOKENS) {
    throw new OptionsError(
      `${name} ${tokens}: give a whole number of at least ${MIN_THINKING_TOKENS} (the API's smallest thinking budget), e.g. 8000, or 0 for no thinking.`,
    );
  }
  return { type: "enabled", budget_tokens: tokens };
}

/**
 * Options first, then the settings files: `thinking`, else `maxThinkingTokens`, else the
 * settings' `maxThinkingTokens`, else `alwaysThinkingEnabled` (adaptive thinking, as Claude
 * Code sends it); `toolUseSummaryModel` and `contextEditing` the same way.
 */
export function resolveLoopChoices(given: GivenLoopChoices, settings: Settings): LoopChoices {
  const thinking =
    given.thinking ??
    (given.maxThinkingTokens === undefined ? undefined : thinkingForBudget(given.maxThinkingTokens)) ??
    (settings.maxThinkingTokens === undefined ? undefined : thinkingForBudget(settings.maxThinkingTokens)) ??
    (settings.alwaysThinkingEnabled === true ? { type: "adaptive" } : undefined);
  const toolUseSummaryModel = given.toolUseSummaryModel ?? settings.toolUseSummaryModel;
  const contextEditing = given.contextEditing ?? settings.contextEditing;
  const autoCompactWindow =
    given.autoCompactWindow === undefined ? undefined : checkAutoCompactWindow(given.autoCompactWindow);
  return {
    ...(autoCompactWindow === undefined ? {} : { autoCompactWindow }),
    ...(thinking === undefined || thinking.type === "disabled" ? {} : { thinking }),
    ...(toolUseSummaryModel === undefined ? {} : { toolUseSummaryModel }),
    ...(contextEditing === true ? { contextEditing } : {}),
  };
}
