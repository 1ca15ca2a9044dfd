import { type GivenLoopChoices, MIN_THINKING_TOKENS } from "@forkloop/sdk";
import { z } from "zod";
import { CliError } from "./cli-error.js";

/**
 * The flags every agent's loop takes, for `run` and `batch` alike: thinking
 * (R-L17), the tool-use summary model (R-L18) and API context editing (R-C2). Each wins over its
 * settings key; the SDK resolves the rest (packages/sdk/src/loop-choices.ts).
 */
export const LOOP_FLAGS_USAGE = `  --thinking MODE         adaptive | enabled (needs a budget) | disabled (settings: alwaysThinkingEnabled)
  --max-thinking-tokens N extended thinking with this budget, at least ${MIN_THINKING_TOKENS}; 0 = off
                          (also MAX_THINKING_TOKENS=N; settings: maxThinkingTokens)
  --summary-model NAME    a small model summarizes each batch of tool calls (settings: toolUseSummaryModel)
  --context-editing       the API clears old tool results at the microcompact line instead of forkloop
                          (settings: contextEditing)`;

export const loopFlagsSchema = {
  thinking: z
    .enum(["adaptive", "enabled", "disabled"], { message: "must be adaptive, enabled or disabled" })
    .optional(),
  "max-thinking-tokens": z
    .string()
    .regex(/^\d+$/, "must be a whole number, e.g. --max-thinking-tokens 8000 (0 = no thinking)")
    .transform(Number)
    .refine(
      (value) => value === 0 || value >= MIN_THINKING_TOKENS,
      `must be at least ${MIN_THINKING_TOKENS} (the API's smallest thinking budget), or 0 for no thinking`,
    )
    .optional(),
  "summary-model": z.string().min(1, "give a model id, e.g. --summary-model claude-haiku-4-5").optional(),
  "context-editing": z.boolean().optional(),
};

export const LOOP_FLAG_OPTIONS = {
  thinking: { type: "string" },
  "max-thinking-tokens": { type: "string" },
  "summary-model": { type: "string" },
  "context-editing": { type: "boolean" },
} as const;

type LoopFlags = {
  readonly thinking?: "adaptive" | "enabled" | "disabled" | undefined;
  readonly "max-thinking-tokens"?: number | undefined;
  readonly "summary-model"?: string | undefined;
  readonly "context-editing"?: boolean | undefined;
};

/** The flags (and `MAX_THINKING_TOKENS`) as the SDK's loop choices; a contradiction is exit 2. */
export function loopChoicesFromFlags(
  flags: LoopFlags,
  env: Record<string, string | undefined>,
): GivenLoopChoices {
  const budget = flags["max-thinking-tokens"] ?? budgetFromEnv(env.MAX_THINKING_TOKENS);
  const mode = flags.thinking;
  if (mode === "enabled" && (budget === undefined || budget === 0)) {
    throw new CliError(
      "--thinking enabled needs a budget: add --max-thinking-tokens N (at least 1024), or use --thinking adaptive.",
    );
  }
  if (mode !== undefined && mode !== "enabled" && flags["max-thinking-tokens"] !== undefined) {
    throw new CliError(
      `--thinking ${mode} takes no budget; drop --max-thinking-tokens, or use --thinking enabled.`,
    );
  }
  return {
    ...(mode === "adaptive" ? { thinking: { type: "adaptive" } } : {}),
    ...(mode === "disabled" ? { maxThinkingTokens: 0 } : {}),
    ...(mode !== "adaptive" && mode !== "disabled" && budget !== undefined
      ? { maxThinkingTokens: budget }
      : {}),
    ...(flags["summary-model"] === undefined ? {} : { toolUseSummaryModel: flags["summary-model"] }),
    ...(flags["context-editing"] === undefined ? {} : { contextEditing: flags["context-editing"] }),
  };
}

/** `MAX_THINKING_TOKENS=N` (as in Claude Code): empty or unset is no choice, 0 is off. */
function budgetFromEnv(value: string | undefined): number | undefined {
  if (value === undefined || value === "") return undefined;
  const tokens = Number(value);
  if (!Number.isInteger(tokens) || (tokens !== 0 && tokens < MIN_THINKING_TOKENS)) {
    throw new CliError(
      `MAX_THINKING_TOKENS=${value}: give a whole number of at least ${MIN_THINKING_TOKENS} (the API's smallest thinking budget), e.g. MAX_THINKING_TOKENS=4000, or 0 for no thinking.`,
    );
  }
  return tokens;
}
