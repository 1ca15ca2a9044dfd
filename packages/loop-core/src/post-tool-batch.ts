import { createSystemMessage } from "./create-message.js";
import type { LoopHooks, PostToolBatchCall } from "./hooks.js";
import type { SystemMessage, ToolUseBlock, UserMessage } from "./messages.js";
import type { ToolUseContext } from "./tool.js";

/** Claude Code 2.1.332's words before a PostToolBatch hook's context, as its model reads them. */
export const POST_TOOL_BATCH_CONTEXT_PREFIX = "PostToolBatch hook additional context: ";

/** The events whose texts reach the model in their event's words (promptHookLabel). */
const LABELLED_EVENTS = new Set(["SessionStart", "UserPromptSubmit", "UserPromptExpansion", "SubagentStart"]);

/**
 * Claude Code 2.1.332's words before a hook's text for the model, as its model reads them
 * (claude-cli scenarios hook-session-context, hooks-prompt-expansion-context,
 * hooks-subagent-start-context): `<event> hook additional context: ` for a JSON additionalContext
 * of SessionStart, UserPromptSubmit, UserPromptExpansion and SubagentStart;
 * `SessionStart:<source> hook success: ` / `<event> hook success: ` for plain stdout (which
 * SubagentStart's never is). Other events' texts get none here ("").
 */
export function promptHookLabel(
  event: string,
  from: "additionalContext" | "stdout",
  sessionSource = "startup",
): string {
  if (!LABELLED_EVENTS.has(event)) return "";
  if (from === "additionalContext") return `${event} hook additional context: `;
  return event === "SessionStart"
    ? `SessionStart:${sessionSource} hook success: `
    : `${event} hook success: `;
}

/**
 * PostToolBatch (Claude Code's event, R-X1): once every tool call of one reply has its result —
 * after their PostToolUse hooks, before the next request — each hook sees the calls with what the
 * model is sent back. What the hooks answer as additionalContext is returned, in hook order, for
 * the model's next request; one that throws is skipped (hooks.ts).
 */
export async function firePostToolBatch(
  hooks: LoopHooks | undefined,
  calls: readonly ToolUseBlock[],
  results: readonly UserMessage[],
  context: ToolUseContext,
): Promise<readonly string[]> {
  const list = hooks?.postToolBatch ?? [];
  if (list.length === 0 || calls.length === 0) return [];
  const responses = new Map<string, unknown>();
  for (const result of results) {
    const content = result.message.content;
    if (typeof content === "string") continue;
    for (const block of content) {
      if (block.type === "tool_result") responses.set(block.tool_use_id, block.content ?? "");
    }
  }
  const batch: PostToolBatchCall[] = calls.map((call) => ({
    toolName: call.name,
    toolInput: call.input as Record<string, unknown>,
    toolUseId: call.id,
    toolResponse: responses.get(call.id) ?? null,
  }));
  const additionalContext: string[] = [];
  for (const hook of list) {
    try {
      const outcome = await hook({ calls: batch, context });
      for (const text of outcome.additionalContext ?? []) if (text !== "") additionalContext.push(text);
    } catch {
      // no opinion (hooks.ts)
    }
  }
  return additionalContext;
}

/**
 * The hooks' context for the model (R-X1), in Claude Code's words, one `model_context` marker
 * each: sent as a system message after the batch's results where the model takes one (as Claude
 * Code sends it), else as text of their user turn (api-messages.ts).
 */
export function batchContextMessages(
  contexts: readonly string[],
  parentUuid: string | null,
): SystemMessage[] {
  return contexts.map((text) =>
    createSystemMessage(`${POST_TOOL_BATCH_CONTEXT_PREFIX}${text}`, "model_context", { parentUuid }),
  );
}
