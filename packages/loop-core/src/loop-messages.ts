import { createUserMessage, INTERRUPT_MESSAGE, INTERRUPT_MESSAGE_FOR_TOOL_USE } from "./create-message.js";
import { SUBMIT_INTERRUPT_REASON } from "./loop-state.js";
import type { AssistantMessage, Message, UserMessage } from "./messages.js";

export function lastUuid(messages: readonly Message[]): string | null {
  return messages.at(-1)?.uuid ?? null;
}

/**
 * R-L16: a hard interrupt (Ctrl+C) leaves a notice in the history; a submit-interrupt (the user
 * typed a new message, `abort("interrupt")`) does not — the new message says it all.
 */
export function interruptNotice(
  signal: AbortSignal,
  toolUse: boolean,
  uuid: () => string,
  parentUuid: string | null,
): UserMessage | undefined {
  if (signal.reason === SUBMIT_INTERRUPT_REASON) return undefined;
  return createUserMessage(toolUse ? INTERRUPT_MESSAGE_FOR_TOOL_USE : INTERRUPT_MESSAGE, {
    interrupt: { toolUse },
    uuid: uuid(),
    parentUuid,
  });
}

/** R-L8: thinking blocks carry signatures bound to the model that wrote them. */
export function stripThinkingBlocks(messages: readonly Message[]): readonly Message[] {
  return messages.map((message) => {
    if (message.type !== "assistant") return message;
    const content = message.message.content.filter(
      (block) => block.type !== "thinking" && block.type !== "redacted_thinking",
    );
    if (content.length === message.message.content.length) return message;
    return { ...message, message: { ...message.message, content } };
  });
}

/**
 * A reply cut at the output cap, as kept for recovery: a cut tool_use has partial input and
 * could not be answered meaningfully, so tool_use blocks are dropped; nothing is kept when only
 * thinking would remain (R-L17: thinking never ends a turn).
 */
export function keepableCutReply(message: AssistantMessage): AssistantMessage | undefined {
  const content = message.message.content.filter((block) => block.type !== "tool_use");
  if (!content.some((block) => block.type === "text" && block.text.length > 0)) return undefined;
  return { ...message, message: { ...message.message, content } };
}

/** The text of the newest assistant reply (Stop hooks' `last_assistant_message`); undefined if it has none. */
export function lastAssistantText(messages: readonly Message[]): string | undefined {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (message?.type !== "assistant") continue;
    const text = message.message.content
      .map((block) => (block.type === "text" ? block.text : ""))
      .join("")
      .trim();
    return text === "" ? undefined : text;
  }
  return undefined;
}
