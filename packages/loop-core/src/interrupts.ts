import type { LoopEvent } from "./loop-events.js";
import { interruptNotice, lastUuid } from "./loop-messages.js";
import type { AssistantMessage, Message, UserMessage } from "./messages.js";
import { yieldMissingToolResultBlocks } from "./missing-tool-results.js";
import type { ModelReply } from "./model-attempt.js";

/**
 * R-L16, path 1: aborted while the reply streamed. Tools may have started from blocks of a reply
 * that never completed: that reply is not in the history, so their results would answer a
 * tool_use the API never sees (a 400) — only results of kept replies stay. Returns the history.
 */
export async function* abortedWhileStreaming(
  reply: ModelReply,
  signal: AbortSignal,
  uuid: () => string,
  /** The reply had ended with its tool calls: the notice says the stop came during tool use. */
  toolUse = false,
): AsyncGenerator<LoopEvent, Message[]> {
  const kept = new Set(reply.assistantMessages.map((message) => message.uuid));
  const results: UserMessage[] = [];
  for await (const outcome of reply.executor.results()) {
    if (!kept.has(outcome.message.parentUuid ?? "")) continue;
    results.push(outcome.message);
    yield outcome.message;
  }
  const orphans = [
    ...yieldMissingToolResultBlocks(reply.assistantMessages, results, "Interrupted by user", uuid),
  ];
  yield* orphans;
  return yield* withNotice(
    [...reply.messagesForQuery, ...reply.replies, ...results, ...orphans],
    signal,
    toolUse,
    uuid,
  );
}

/** R-L16, path 2: aborted while the tools ran; every unanswered tool_use gets its result. */
export async function* abortedDuringTools(
  assistants: readonly AssistantMessage[],
  history: readonly Message[],
  toolResults: readonly UserMessage[],
  signal: AbortSignal,
  uuid: () => string,
): AsyncGenerator<LoopEvent, Message[]> {
  const orphans = [...yieldMissingToolResultBlocks(assistants, toolResults, "Interrupted by user", uuid)];
  yield* orphans;
  return yield* withNotice([...history, ...toolResults, ...orphans], signal, true, uuid);
}

async function* withNotice(
  messages: Message[],
  signal: AbortSignal,
  toolUse: boolean,
  uuid: () => string,
): AsyncGenerator<LoopEvent, Message[]> {
  const notice = interruptNotice(signal, toolUse, uuid, lastUuid(messages));
  if (notice) {
    yield notice;
    messages.push(notice);
  }
  return messages;
}
