import type { AssistantMessage, Message, ToolUseBlock, UserMessage } from "./messages.js";
import { errorResult, INTERRUPTED_META, toolResultMessage } from "./tool-execution.js";

const INTERRUPTED = "Interrupted by user";

/** tool_use blocks of `assistants` that no message in `answered` has a tool_result for. */
function unansweredToolUses(
  assistants: readonly AssistantMessage[],
  answered: readonly Message[],
): { readonly block: ToolUseBlock; readonly assistant: AssistantMessage }[] {
  const answeredIds = new Set<string>();
  for (const message of answered) {
    if (message.type !== "user" || typeof message.message.content === "string") continue;
    for (const block of message.message.content) {
      if (block.type === "tool_result") answeredIds.add(block.tool_use_id);
    }
  }
  const missing: { block: ToolUseBlock; assistant: AssistantMessage }[] = [];
  for (const assistant of assistants) {
    for (const block of assistant.message.content) {
      if (block.type === "tool_use" && !answeredIds.has(block.id)) missing.push({ block, assistant });
    }
  }
  return missing;
}

/**
 * R-L12 `yieldMissingToolResultBlocks`: the API requires a tool_result for every tool_use, so
 * wherever the loop gives up on a turn (model crash, model fallback, abort) it answers every
 * open tool_use with an error result. Without this the next request is rejected with a 400.
 */
export function* yieldMissingToolResultBlocks(
  assistants: readonly AssistantMessage[],
  answered: readonly Message[],
  reason: string,
  uuid: () => string,
): Generator<UserMessage, void> {
  for (const { block, assistant } of unansweredToolUses(assistants, answered)) {
    // A call the user's interrupt left unanswered is reported as rejected by the user (R-K2).
    const meta = reason === INTERRUPTED ? INTERRUPTED_META : undefined;
    yield toolResultMessage(block.id, errorResult(reason), assistant.uuid, uuid(), meta);
  }
}
