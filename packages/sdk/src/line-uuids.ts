import { createHash } from "node:crypto";
import type { Message } from "@forkloop/loop-core";

/**
 * R-K1: the uuids of the lines a message is yielded as, one line per content block (R-K2). The
 * last line carries the message's own uuid, the one its transcript records; each earlier line's is
 * derived from the message (an assistant message's API id, which a line given while the block
 * streamed knows before the message has a uuid; a user message's uuid) and its block's index.
 * So any uuid a program saw on a yielded line leads back to its transcript entry and block, as
 * `resumeSessionAt` and `forkSession`'s `upToMessageId` need.
 */
export function blockLineUuid(key: string, index: number): string {
  const hex = createHash("sha256").update(`forkloop-line:${key}:${index}`).digest("hex");
  // RFC 9562's layout: version 8 (custom), variant 10.
  const variant = ((Number.parseInt(hex[16] ?? "0", 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The uuid of block `index` of `lines` blocks' lines: the message's own for the last. */
export function lineUuid(messageUuid: string, key: string, index: number, lines: number): string {
  return index === lines - 1 ? messageUuid : blockLineUuid(key, index);
}

/** What a message's earlier lines' uuids are derived from (see blockLineUuid). */
function lineKey(message: Exclude<Message, { type: "system" }>): string {
  return message.type === "assistant" ? message.message.id : message.uuid;
}

/**
 * The history up to and including the line `uuid` names: a whole message by its own uuid, or a
 * message cut after the block of one of its earlier lines (the cut message then carries that
 * line's uuid, as its last line would). Undefined when no message or line has that uuid.
 */
export function historyUpToLine(messages: readonly Message[], uuid: string): Message[] | undefined {
  for (const [index, message] of messages.entries()) {
    if (message.uuid === uuid) return messages.slice(0, index + 1);
    if (message.type === "system") continue;
    const key = lineKey(message);
    const content = message.message.content;
    if (!Array.isArray(content)) continue;
    for (let block = 0; block < content.length - 1; block++) {
      if (blockLineUuid(key, block) !== uuid) continue;
      const cut = {
        ...message,
        uuid,
        message: { ...message.message, content: content.slice(0, block + 1) },
      } as Message;
      return [...messages.slice(0, index), cut];
    }
  }
  return undefined;
}
