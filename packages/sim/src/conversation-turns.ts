import type { ContentBlockParam, CountTokensRequest, MessageParam } from "./request-schema.js";

export interface Turn {
  role: "user" | "assistant";
  /** Index of the first message of the turn (same-role messages are merged, api doc §1). */
  firstMessage: number;
  blocks: { m: number; b: number; block: ContentBlockParam }[];
}

/** Consecutive same-role messages form one turn; `role: "system"` messages are transparent. */
export function turnsOf(body: CountTokensRequest): Turn[] {
  const turns: Turn[] = [];
  body.messages.forEach((message, m) => {
    if (message.role === "system") return;
    const blocks = blocksOf(message);
    let turn = turns.at(-1);
    if (!turn || turn.role !== message.role) {
      turn = { role: message.role, firstMessage: m, blocks: [] };
      turns.push(turn);
    }
    blocks.forEach((block, b) => {
      turn.blocks.push({ m, b, block });
    });
  });
  return turns;
}

/** A message's content as blocks: string content is one text block (api doc §1). */
export function blocksOf(message: MessageParam): ContentBlockParam[] {
  return typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
}
