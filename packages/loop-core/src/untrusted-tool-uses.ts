import { randomBytes } from "node:crypto";
import type { ContentBlock, Message, ToolUseBlock } from "./messages.js";

/**
 * R-R3: model output is untrusted input. A tool input deeper than this is refused before
 * anything recurses over it (the transcript encoder, structured clone to a worker, the SDK's
 * JSON.stringify of the next request would overflow the stack at a few thousand levels). Real tool
 * schemas nest a handful of levels.
 */
export const MAX_TOOL_INPUT_DEPTH = 64;

/** The API's pattern for tool_use ids. */
const TOOL_USE_ID = /^[a-zA-Z0-9_-]{1,256}$/;

/** A tool_use the model client refused to run; `rejected` says why (it becomes an is_error result). */
type ScreenedToolUse = ToolUseBlock & { rejected?: string };

/** Why the loop will not run this tool_use, if it will not (see `screenToolUse`). */
export function toolUseRejection(block: ToolUseBlock): string | undefined {
  return (block as ScreenedToolUse).rejected;
}

/**
 * Checks one completed tool_use block of a reply before anyone runs, stores or re-sends it, and
 * repairs it in place so the history stays a request the API accepts:
 * - an id already used in the conversation (or earlier in this reply), or not a valid id, gets a
 *   fresh id — two results for one id, or a reused id, make the API reject every later request;
 * - an input nested deeper than MAX_TOOL_INPUT_DEPTH (or not an object) becomes `{}`.
 * Either way the block is marked `rejected`, and tool execution answers it with an is_error
 * tool_result instead of running it. `seenIds` holds the ids used so far and is updated.
 */
export function screenToolUse(block: ToolUseBlock, seenIds: Set<string>): void {
  const screened = block as ScreenedToolUse;
  const id = (block as { id?: unknown }).id;
  if (typeof id !== "string" || !TOOL_USE_ID.test(id) || seenIds.has(id)) {
    screened.id = `toolu_forkloop_${randomBytes(12).toString("hex")}`;
    screened.rejected =
      typeof id === "string" && seenIds.has(id)
        ? `Duplicate tool_use id ${id}: this call was not run (each tool_use needs its own id). Call the tool again if it is still needed.`
        : "Invalid tool_use id: this call was not run. Call the tool again if it is still needed.";
  }
  seenIds.add(screened.id);
  const input = block.input as unknown;
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    screened.input = {};
    screened.rejected ??= "InputValidationError: the tool input must be a JSON object";
  } else if (depthExceeds(input, MAX_TOOL_INPUT_DEPTH)) {
    screened.input = {};
    screened.rejected ??= `InputValidationError: the tool input is nested deeper than ${MAX_TOOL_INPUT_DEPTH} levels`;
  }
}

/** Every tool_use id already in the conversation (the API wants them unique across it). */
export function toolUseIdsOf(messages: readonly Message[]): Set<string> {
  const ids = new Set<string>();
  for (const message of messages) {
    if (message.type !== "assistant") continue;
    for (const block of message.message.content as readonly ContentBlock[]) {
      if (block.type === "tool_use") ids.add(block.id);
    }
  }
  return ids;
}

/** Iterative (a recursive walk would overflow on exactly the inputs it must catch). */
function depthExceeds(root: object, limit: number): boolean {
  const stack: { value: unknown; depth: number }[] = [{ value: root, depth: 1 }];
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (typeof value !== "object" || value === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(value)) {
      if (typeof child === "object" && child !== null) stack.push({ value: child, depth: depth + 1 });
    }
  }
  return false;
}
