import { randomUUID } from "node:crypto";
import {
  type AssistantMessage,
  type CacheSafeParams,
  type Message,
  type UserMessage,
  yieldMissingToolResultBlocks,
} from "@forkloop/loop-core";
import type { ReadTranscript } from "./transcript.js";

/**
 * R-R4: a transcript that ends mid-turn (a kill -9 while tools ran, or a `--repair` that kept
 * the intact part) holds tool_use blocks nobody answered; sent as is, every later request would
 * be rejected. The last assistant turn's open calls get an error result, as R-L12 does when the
 * loop gives up on a turn; the caller appends these to the transcript too.
 */
export function answerOpenToolUses(
  messages: readonly Message[],
  /** R-R13: calls answered otherwise (an interrupted sub-agent that continues). */
  except: ReadonlySet<string> = new Set(),
): UserMessage[] {
  let last = messages.length - 1;
  while (last >= 0 && messages[last]?.type !== "assistant") last--;
  if (last < 0) return [];
  let first = last;
  while (first > 0 && messages[first - 1]?.type === "assistant") first--;
  const turn = messages.slice(first, last + 1) as AssistantMessage[];
  return [
    ...yieldMissingToolResultBlocks(
      turn.filter((message) => !message.apiError),
      messages.slice(last + 1),
      "The session stopped before this tool call finished; it may or may not have run.",
      randomUUID,
    ),
  ].filter((result) => !answers(result, except));
}

/** What a resumed session starts from (R-R12): the folded history and the latest prefix. */
export function resumedState(file: ReadTranscript): {
  readonly messages: Message[];
  readonly cacheSafeParams: CacheSafeParams | undefined;
} {
  return { messages: [...file.fold.messages()], cacheSafeParams: file.fold.cacheSafeParams() };
}

function answers(message: UserMessage, ids: ReadonlySet<string>): boolean {
  const content = message.message.content;
  return (
    typeof content !== "string" &&
    content.some((block) => block.type === "tool_result" && ids.has(block.tool_use_id))
  );
}
