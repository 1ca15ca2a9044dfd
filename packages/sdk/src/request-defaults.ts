import {
  type EffortLevel,
  effortForModel,
  getModelInfo,
  MODEL_TABLE,
  type ModelInfo,
  type ThinkingConfigParam,
} from "@forkloop/loop-core";
import { OptionsError } from "./options-error.js";

/**
 * R-X2: what every request of a query() session — and so of `forkloop run`, a drop-in for
 * `claude -p` — carries when nothing says otherwise, as Claude Code 2.1.332 sends it (read from
 * its recorded requests in test/conformance/claude-cli): the model's whole output cap, adaptive
 * thinking with the thinking text omitted, effort `medium`; for a model without adaptive thinking
 * (Haiku 4.5), 32,000 tokens and extended thinking with the whole cap but one as its budget, no
 * effort. `CLAUDE_CODE_MAX_OUTPUT_TOKENS` sets the cap. `forkloop batch` keeps its own, smaller
 * defaults (its items are many and billed together: loop-core's 8,000, no thinking).
 */
export interface RequestDefaults {
  readonly maxOutputTokens: number;
  readonly thinking?: ThinkingConfigParam;
  readonly effort?: EffortLevel;
}

/** Claude Code's output cap for a model without adaptive thinking (its own cap may be higher). */
const NON_ADAPTIVE_OUTPUT_CAP = 32_000;
/** Claude Code's effort when none is given. */
const DEFAULT_EFFORT: EffortLevel = "medium";
/** The API's smallest thinking budget: a smaller cap leaves no room for default thinking. */
const MIN_THINKING_BUDGET = 1024;

export interface RequestDefaultsInput {
  readonly model: string;
  readonly modelOverrides: readonly ModelInfo[];
  /** The environment, then the settings' `env`: `CLAUDE_CODE_MAX_OUTPUT_TOKENS`. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Thinking as the options or settings chose it; "off" when they turned it off. */
  readonly thinking: ThinkingConfigParam | "off" | undefined;
  readonly effort: EffortLevel | undefined;
}

export function claudeCodeRequestDefaults(input: RequestDefaultsInput): RequestDefaults {
  const info = getModelInfo(input.model, input.modelOverrides);
  const name = input.model.endsWith("[1m]") ? input.model.slice(0, -"[1m]".length) : input.model;
  const row = MODEL_TABLE.find((r) => r.id === name || r.aliases.includes(name));
  // A model the table does not know may refuse adaptive thinking or effort: it gets neither.
  const adaptive = row?.thinking.adaptive === true;
  const cap = outputCapFromEnv(input.env, info.maxOutputTokens);
  const maxOutputTokens = Math.min(
    cap ?? (adaptive ? info.maxOutputTokens : NON_ADAPTIVE_OUTPUT_CAP),
    info.maxOutputTokens,
  );
  const thinking =
    input.thinking === "off"
      ? undefined
      : (input.thinking ?? defaultThinking(row?.thinking, adaptive, maxOutputTokens));
  const effort =
    input.effort ??
    (row === undefined ? undefined : effortForModel(input.model, DEFAULT_EFFORT, thinking === undefined));
  return {
    maxOutputTokens,
    ...(thinking === undefined ? {} : { thinking }),
    ...(effort === undefined ? {} : { effort }),
  };
}

function defaultThinking(
  support: { readonly enabled: boolean } | undefined,
  adaptive: boolean,
  maxOutputTokens: number,
): ThinkingConfigParam | undefined {
  if (adaptive) return { type: "adaptive", display: "omitted" };
  if (support?.enabled !== true || maxOutputTokens - 1 < MIN_THINKING_BUDGET) return undefined;
  return { type: "enabled", budget_tokens: maxOutputTokens - 1, display: "omitted" };
}

/** `CLAUDE_CODE_MAX_OUTPUT_TOKENS`: a whole number ≥ 1; above the model's own cap it is that cap. */
function outputCapFromEnv(env: RequestDefaultsInput["env"], modelCap: number): number | undefined {
  const value = env.CLAUDE_CODE_MAX_OUTPUT_TOKENS;
  if (value === undefined || value === "") return undefined;
  const tokens = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(tokens) || tokens < 1) {
    throw new OptionsError(
      `environment variable CLAUDE_CODE_MAX_OUTPUT_TOKENS: "${value}" is not a whole number of tokens; give one of at least 1, e.g. 32000 (this model's cap is ${modelCap}), or unset it.`,
    );
  }
  return tokens;
}
