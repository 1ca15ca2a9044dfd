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
 * its recorded requests in test/conformance/claude-cli): per model family, the output cap, the
 * thinking and the effort of CLAUDE_CODE_FAMILY_DEFAULTS. `CLAUDE_CODE_MAX_OUTPUT_TOKENS` sets the
 * cap. A sub-agent on another model than its parent gets that model's defaults too (an Agent
 * call's `model`, an agent definition's). `forkloop batch` keeps its own, smaller defaults (its
 * items are many and billed together: loop-core's 8,000, no thinking).
 */
export interface RequestDefaults {
  readonly maxOutputTokens: number;
  readonly thinking?: ThinkingConfigParam;
  readonly effort?: EffortLevel;
}

/** What Claude Code sends a model family when nothing is chosen. */
interface FamilyDefaults {
  /** `max_tokens`: a number of tokens, or the model's whole cap. */
  readonly outputCap: number | "model";
  /** The effort asked for (the model's row may take a lower one, or none: Haiku 4.5). */
  readonly effort: EffortLevel;
}

/**
 * THE TABLE of Claude Code 2.1.332's request defaults, keyed by model family (the id without its
 * date). Each row is what the real CLI sent in the claude-cli scenarios named beside it; thinking
 * follows from the model (adaptive where it takes it, else extended thinking with the cap but one
 * as its budget). A family no scenario has shown gets UNSEEN_ADAPTIVE or UNSEEN_BUDGETED.
 */
const CLAUDE_CODE_FAMILY_DEFAULTS: Readonly<Record<string, FamilyDefaults>> = {
  // one-shot-json, one-shot-text, one-shot-stream-json (the default model): 128000, adaptive, medium.
  "claude-opus-5-5": { outputCap: "model", effort: "medium" },
  // model-alias, slash-command-frontmatter (`sonnet`): 128000, adaptive, medium.
  "claude-sonnet-5-5": { outputCap: "model", effort: "medium" },
  // env-default-model-aliases (`--model sonnet` under ANTHROPIC_DEFAULT_SONNET_MODEL): 32000, adaptive, high.
  "claude-sonnet-4-6": { outputCap: 32_000, effort: "high" },
  // model-not-found: 32000, budget 31999.
  "claude-sonnet-4-5": { outputCap: 32_000, effort: "medium" },
  // env-anthropic-model, settings-flag; env-default-model-aliases' sub-agent (an Agent call's
  // `model: haiku` under ANTHROPIC_DEFAULT_HAIKU_MODEL): 32000, budget 31999, no effort.
  "claude-haiku-4-5": { outputCap: 32_000, effort: "medium" },
};
/** A family no scenario has shown, with adaptive thinking: as the newest models. */
const UNSEEN_ADAPTIVE: FamilyDefaults = { outputCap: "model", effort: "medium" };
/** A family no scenario has shown, without adaptive thinking: as Sonnet 4.5 and Haiku 4.5. */
const UNSEEN_BUDGETED: FamilyDefaults = { outputCap: 32_000, effort: "medium" };
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
  const family = row === undefined ? undefined : familyDefaults(row.id, row.aliases, adaptive);
  const cap = outputCapFromEnv(input.env, info.maxOutputTokens);
  const familyCap =
    family === undefined || family.outputCap === "model" ? info.maxOutputTokens : family.outputCap;
  const maxOutputTokens = Math.min(cap ?? familyCap, info.maxOutputTokens);
  const thinking =
    input.thinking === "off"
      ? undefined
      : (input.thinking ?? defaultThinking(row?.thinking, adaptive, maxOutputTokens));
  const effort =
    input.effort ??
    (family === undefined ? undefined : effortForModel(input.model, family.effort, thinking === undefined));
  return {
    maxOutputTokens,
    ...(thinking === undefined ? {} : { thinking }),
    ...(effort === undefined ? {} : { effort }),
  };
}

/** The table's row for a model (its id, or its undated alias for a dated id). */
function familyDefaults(id: string, aliases: readonly string[], adaptive: boolean): FamilyDefaults {
  const row = [id, ...aliases].map((name) => CLAUDE_CODE_FAMILY_DEFAULTS[name]).find((r) => r !== undefined);
  return row ?? (adaptive ? UNSEEN_ADAPTIVE : UNSEEN_BUDGETED);
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
