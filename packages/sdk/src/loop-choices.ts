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

/** What CLAUDE_CODE_AUTO_COMPACT_WINDOW says: the window it sets (none when unset or unusable) and Claude Code's warning. */
export interface AutoCompactWindowEnv {
  readonly tokens?: number;
  /** Claude Code prints it on stderr in a text run; a json or stream-json run prints nothing. */
  readonly warning?: string;
}

/** How much of the value the warning quotes. */
const QUOTED_CHARS = 32;

/**
 * R-C7: CLAUDE_CODE_AUTO_COMPACT_WINDOW read as Claude Code 2.1.332 reads it (its binary's env
 * reader): `500k`, `1.5m` or a whole number of tokens (no thousands shorthand, unlike
 * `--autocompact 200`); under 100k it is the 100k minimum, a value that is no size is ignored,
 * each with a warning. It wins over `--autocompact` (the autoCompactWindow option) and the
 * settings, as there.
 */
export function autoCompactWindowFromEnv(value: string | undefined): AutoCompactWindowEnv {
  if (value === undefined) return {};
  const text = value.trim();
  const suffix = text.slice(-1).toLowerCase();
  const unit = suffix === "m" ? 1_000_000 : suffix === "k" ? 1000 : undefined;
  const read = unit === undefined ? wholeNumber(text) : Number.parseFloat(text) * unit;
  const tokens = Math.round(read);
  const quoted = `CLAUDE_CODE_AUTO_COMPACT_WINDOW="${value.slice(0, QUOTED_CHARS).replace(/[^\w.,+ $%{}=;-]+/g, "?")}${value.length > QUOTED_CHARS ? "\u2026" : ""}"`;
  const fix = "Set it to a size of at least 100k, such as 200k or 200000, or unset it.";
  if (!Number.isSafeInteger(tokens) || read < 1) {
    return { warning: `${quoted} isn't a usable size, so Claude Code ignores it. ${fix}` };
  }
  if (read < MIN_AUTOCOMPACT_WINDOW_TOKENS) {
    const shown = Math.min(MIN_AUTOCOMPACT_WINDOW_TOKENS - 1, tokens);
    return {
      tokens: MIN_AUTOCOMPACT_WINDOW_TOKENS,
      warning: `${quoted} reads as ${shown.toLocaleString("en-US")} ${shown === 1 ? "token" : "tokens"}, so Claude Code treats it as the 100k minimum. ${fix}`,
    };
  }
  return { tokens };
}

/** A whole number as Claude Code's env reader takes one: `200000`, `200,000`, else its leading digits. */
function wholeNumber(text: string): number {
  if (/^[+-]?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(text)) {
    const number = Number(text);
    return Number.isInteger(number) ? number : Number.NaN;
  }
  if (/^\d{1,3}(,\d{3})+$/.test(text)) return Number.parseInt(text.replace(/,/g, ""), 10);
  return Number.parseInt(text, 10);
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
 * Code sends it); `toolUseSummaryModel` and `contextEditing` the same way. The auto-compact
 * window: CLAUDE_CODE_AUTO_COMPACT_WINDOW in `env` (the settings' env beneath the run's), else the option.
 */
export function resolveLoopChoices(
  given: GivenLoopChoices,
  settings: Settings,
  env: Readonly<Record<string, string | undefined>> = {},
): LoopChoices {
  const thinking =
    given.thinking ??
    (given.maxThinkingTokens === undefined ? undefined : thinkingForBudget(given.maxThinkingTokens)) ??
    (settings.maxThinkingTokens === undefined ? undefined : thinkingForBudget(settings.maxThinkingTokens)) ??
    (settings.alwaysThinkingEnabled === true ? { type: "adaptive" } : undefined);
  const toolUseSummaryModel = given.toolUseSummaryModel ?? settings.toolUseSummaryModel;
  const contextEditing = given.contextEditing ?? settings.contextEditing;
  const autoCompactWindow =
    autoCompactWindowFromEnv(env.CLAUDE_CODE_AUTO_COMPACT_WINDOW).tokens ??
    (given.autoCompactWindow === undefined ? undefined : checkAutoCompactWindow(given.autoCompactWindow));
  return {
    ...(autoCompactWindow === undefined ? {} : { autoCompactWindow }),
    ...(thinking === undefined || thinking.type === "disabled" ? {} : { thinking }),
    ...(toolUseSummaryModel === undefined ? {} : { toolUseSummaryModel }),
    ...(contextEditing === true ? { contextEditing } : {}),
  };
}
