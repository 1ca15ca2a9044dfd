import { randomUUID } from "node:crypto";
import type {
  AssistantMessage,
  ContentBlockParam,
  Message,
  SystemMessage,
  ToolResultBlockParam,
  UserMessage,
} from "@forkloop/loop-core";

/**
 * Shape facts about a history that every stage needs: which blocks a message holds, where a
 * history may be cut without orphaning a tool_use, which user message is a person's request.
 */

export function contentBlocks(message: UserMessage | AssistantMessage): readonly ContentBlockParam[] {
  const content = message.message.content;
  if (typeof content === "string") return [{ type: "text", text: content }];
  return content as readonly ContentBlockParam[];
}

export function toolResultBlocks(message: Message): readonly ToolResultBlockParam[] {
  if (message.type !== "user" || typeof message.message.content === "string") return [];
  return message.message.content.filter(
    (block): block is ToolResultBlockParam => block.type === "tool_result",
  );
}

export function toolResultText(block: ToolResultBlockParam): string {
  if (typeof block.content === "string") return block.content;
  return (block.content ?? []).map((part) => (part.type === "text" ? part.text : "")).join("");
}

export interface ToolUseInfo {
  readonly id: string;
  readonly name: string;
  readonly input: Record<string, unknown>;
  /** Index of the assistant message that holds the tool_use. */
  readonly messageIndex: number;
}

/** Every tool_use of the history by id (the tool_result only carries the id, R-C0/R-C2). */
export function indexToolUses(messages: readonly Message[]): Map<string, ToolUseInfo> {
  const uses = new Map<string, ToolUseInfo>();
  messages.forEach((message, messageIndex) => {
    if (message.type !== "assistant") return;
    for (const block of message.message.content) {
      if (block.type === "tool_use") {
        uses.set(block.id, {
          id: block.id,
          name: block.name,
          input: (block.input ?? {}) as Record<string, unknown>,
          messageIndex,
        });
      }
    }
  });
  return uses;
}

/** A user message typed by a person (or the task given to a sub-agent), not a tool round-trip. */
export function isHumanTurn(message: Message): message is UserMessage {
  return message.type === "user" && !message.isMeta && toolResultBlocks(message).length === 0;
}

/**
 * A history may be cut just before an assistant reply: every tool_use after the cut gets its
 * tool_result after the cut too (results follow their use immediately), and the kept part starts
 * with an unmodified assistant message so its thinking blocks stay byte-identical (R-L12, R-L17).
 */
export function isSafeCut(messages: readonly Message[], index: number): boolean {
  const message = messages[index];
  return message?.type === "assistant" && !message.apiError;
}

/** Text of a message for summaries, digests and "is the task still there" checks. */
export function messageText(message: Message): string {
  if (message.type === "system") return message.content;
  const parts: string[] = [];
  for (const block of contentBlocks(message)) {
    switch (block.type) {
      case "text":
        parts.push(block.text);
        break;
      case "tool_use":
        parts.push(`[tool_use ${block.name} ${JSON.stringify(block.input)}]`);
        break;
      case "tool_result":
        parts.push(toolResultText(block));
        break;
      default:
        break;
    }
  }
  return parts.join("\n");
}

/** Text of a human turn's request (its text blocks only). */
export function requestText(message: UserMessage): string {
  return contentBlocks(message)
    .flatMap((block) => (block.type === "text" ? [block.text] : []))
    .join("\n");
}

export interface MessageFactory {
  readonly uuid: () => string;
  readonly now: () => string;
}

export const defaultMessageFactory: MessageFactory = {
  uuid: () => randomUUID(),
  now: () => new Date().toISOString(),
};

export function makeUserMessage(
  factory: MessageFactory,
  content: string | readonly ContentBlockParam[],
  parentUuid: string | null,
): UserMessage {
  return {
    type: "user",
    uuid: factory.uuid(),
    parentUuid,
    timestamp: factory.now(),
    isMeta: true,
    message: { role: "user", content },
  };
}

export function makeBoundary(
  factory: MessageFactory,
  subtype: SystemMessage["subtype"],
  content: string,
  parentUuid: string | null,
  compactMetadata?: SystemMessage["compactMetadata"],
): SystemMessage {
  return {
    type: "system",
    subtype,
    uuid: factory.uuid(),
    parentUuid,
    timestamp: factory.now(),
    content,
    ...(compactMetadata === undefined ? {} : { compactMetadata }),
  };
}
