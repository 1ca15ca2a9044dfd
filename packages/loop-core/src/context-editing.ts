import type Anthropic from "@anthropic-ai/sdk";
import { createSystemMessage } from "./create-message.js";
import type { ApiMessage, AssistantMessage, SystemMessage } from "./messages.js";

/** The beta that enables server-side context editing (api doc §9). */
export const CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27";

/**
 * R-C2, cached variant: microcompact done by the API, through its cache. The loop sends these
 * as `context_management.edits`; the API clears old tool results (and thinking) before counting
 * and caching, and reports what it cleared on the response.
 */
export interface ContextEditingConfig {
  /** `clear_tool_uses_20250919`. */
  readonly clearToolUses?: {
    /** When the edit fires (API default: over 100,000 input tokens). */
    readonly trigger?: { readonly type: "input_tokens" | "tool_uses"; readonly value: number };
    /** Most recent tool uses kept (API default 3). */
    readonly keep?: number;
    /** Skip the edit unless it clears at least this many tokens (worth a cache invalidation). */
    readonly clearAtLeast?: number;
    /** Tools whose results are never cleared. */
    readonly excludeTools?: readonly string[];
    /** Also clear the inputs of cleared tool uses: all, or those of the named tools. */
    readonly clearToolInputs?: boolean | readonly string[];
  };
  /** `clear_thinking_20251015`: thinking turns kept (API default 1), or "all". */
  readonly clearThinking?: { readonly keep?: number | "all" };
}

type ContextManagementParam = Anthropic.Beta.Messages.BetaContextManagementConfig;
type Edit = NonNullable<ContextManagementParam["edits"]>[number];
export type AppliedEdit = Anthropic.Beta.Messages.BetaContextManagementResponse["applied_edits"][number];

/** The request's `context_management` field; clear_thinking goes first, as the API requires. */
export function contextManagementParam(config: ContextEditingConfig): ContextManagementParam {
  const edits: Edit[] = [];
  const thinking = config.clearThinking;
  if (thinking) {
    edits.push({
      type: "clear_thinking_20251015",
      ...(thinking.keep === undefined
        ? {}
        : { keep: thinking.keep === "all" ? "all" : { type: "thinking_turns", value: thinking.keep } }),
    });
  }
  const tools = config.clearToolUses;
  if (tools) {
    edits.push({
      type: "clear_tool_uses_20250919",
      ...(tools.trigger ? { trigger: { ...tools.trigger } } : {}),
      ...(tools.keep === undefined ? {} : { keep: { type: "tool_uses", value: tools.keep } }),
      ...(tools.clearAtLeast === undefined
        ? {}
        : { clear_at_least: { type: "input_tokens", value: tools.clearAtLeast } }),
      ...(tools.excludeTools ? { exclude_tools: [...tools.excludeTools] } : {}),
      ...(tools.clearToolInputs === undefined
        ? {}
        : {
            clear_tool_inputs:
              typeof tools.clearToolInputs === "boolean" ? tools.clearToolInputs : [...tools.clearToolInputs],
          }),
    });
  }
  return { edits };
}

/** The edits the API reports it applied to the request that produced `message` (beta field). */
function appliedEdits(message: ApiMessage): readonly AppliedEdit[] {
  const reported = (message as { context_management?: { applied_edits?: AppliedEdit[] } | null })
    .context_management;
  return reported?.applied_edits ?? [];
}

/**
 * R-C2 (cached variant): the boundary marker for what the API cleared, built only from the
 * response (the client cannot know beforehand: the API decides), so the loop yields it after the
 * assistant message. Undefined when nothing was cleared.
 */
export function apiMicrocompactBoundary(
  assistant: AssistantMessage,
  uuid: () => string,
): SystemMessage | undefined {
  const edits = appliedEdits(assistant.message).filter((edit) => edit.cleared_input_tokens > 0);
  if (edits.length === 0) return undefined;
  const clearedInputTokens = edits.reduce((sum, edit) => sum + edit.cleared_input_tokens, 0);
  let clearedToolUses = 0;
  let clearedThinkingTurns = 0;
  for (const edit of edits) {
    if (edit.type === "clear_tool_uses_20250919") clearedToolUses += edit.cleared_tool_uses;
    else clearedThinkingTurns += edit.cleared_thinking_turns;
  }
  const marker = createSystemMessage(
    `The API cleared ${clearedInputTokens} input tokens (${clearedToolUses} tool uses, ${clearedThinkingTurns} thinking turns) through its cache`,
    "microcompact_boundary",
    { uuid: uuid(), parentUuid: assistant.uuid },
  );
  return {
    ...marker,
    microcompactMetadata: { source: "api", clearedInputTokens, clearedToolUses, clearedThinkingTurns },
  };
}
