import { z } from "zod";

/**
 * The beta `context_management` request field (api doc §9, beta header
 * `context-management-2025-06-27`): server-side context editing. Shapes follow SDK 1.14's
 * `BetaClearToolUses20250919Edit` / `BetaClearThinking20251015Edit`.
 */
export const CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27";

const count = z.number().int().nonnegative();

const clearToolUses = z.looseObject({
  type: z.literal("clear_tool_uses_20250919"),
  trigger: z
    .discriminatedUnion("type", [
      z.looseObject({ type: z.literal("input_tokens"), value: count }),
      z.looseObject({ type: z.literal("tool_uses"), value: count }),
    ])
    .optional(),
  keep: z.looseObject({ type: z.literal("tool_uses"), value: count }).optional(),
  clear_at_least: z.looseObject({ type: z.literal("input_tokens"), value: count }).nullish(),
  exclude_tools: z.array(z.string()).nullish(),
  clear_tool_inputs: z.union([z.boolean(), z.array(z.string())]).nullish(),
});

const clearThinking = z.looseObject({
  type: z.literal("clear_thinking_20251015"),
  keep: z
    .union([
      z.literal("all"),
      z.looseObject({ type: z.literal("all") }),
      z.looseObject({ type: z.literal("thinking_turns"), value: count }),
    ])
    .optional(),
});

export const contextManagementSchema = z.looseObject({
  edits: z.array(z.discriminatedUnion("type", [clearToolUses, clearThinking])).optional(),
});

export type ContextManagement = z.infer<typeof contextManagementSchema>;
export type ClearToolUsesEdit = z.infer<typeof clearToolUses>;
export type ClearThinkingEdit = z.infer<typeof clearThinking>;

/** One entry of the response's `context_management.applied_edits` (SDK 1.14 shapes). */
export type AppliedEdit =
  | { type: "clear_tool_uses_20250919"; cleared_tool_uses: number; cleared_input_tokens: number }
  | { type: "clear_thinking_20251015"; cleared_thinking_turns: number; cleared_input_tokens: number };
