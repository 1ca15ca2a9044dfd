import type { LoopHooks, PostToolBatchCall } from "./hooks.js";
import type { ToolUseBlock, UserMessage } from "./messages.js";
import type { ToolUseContext } from "./tool.js";

/**
 * PostToolBatch (Claude Code's event, R-X1): once every tool call of one reply has its result —
 * after their PostToolUse hooks, before the next request — each hook sees the calls with what the
 * model is sent back. The hooks only observe; one that throws is skipped (hooks.ts).
 */
export async function firePostToolBatch(
  hooks: LoopHooks | undefined,
  calls: readonly ToolUseBlock[],
  results: readonly UserMessage[],
  context: ToolUseContext,
): Promise<void> {
  const list = hooks?.postToolBatch ?? [];
  if (list.length === 0 || calls.length === 0) return;
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
  for (const hook of list) {
    try {
      await hook({ calls: batch, context });
    } catch {
      // no opinion (hooks.ts)
    }
  }
}
