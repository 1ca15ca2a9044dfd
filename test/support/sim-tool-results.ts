import type { SimProcess } from "@forkloop/cli/testing";

/**
 * What a scripted model was sent, read from the simulator's request records (`/_sim/requests`):
 * the request bodies, and the tool results by tool_use id (the scenario names the ids).
 */

export type SimRecord = Awaited<ReturnType<SimProcess["requests"]>>[number];

export interface Block {
  type: string;
  tool_use_id?: string;
  is_error?: boolean;
  content?: string | Block[];
  text?: string;
  source?: { data: string };
}

export interface Body {
  tools: { name: string }[];
  messages: { role: string; content: string | Block[] }[];
}

export const bodyOf = (record: SimRecord) => JSON.parse(record.rawBody) as Body;

/** Every tool_result the model was sent, by tool_use id. */
export function toolResults(records: readonly SimRecord[]): Map<string, Block> {
  const results = new Map<string, Block>();
  for (const record of records) {
    for (const message of bodyOf(record).messages) {
      if (typeof message.content === "string") continue;
      for (const block of message.content) {
        if (block.type === "tool_result" && block.tool_use_id) results.set(block.tool_use_id, block);
      }
    }
  }
  return results;
}

/** A tool result's text (its text blocks joined), or "(no result)". */
export function resultText(block: Block | undefined): string {
  if (block === undefined) return "(no result)";
  if (typeof block.content === "string") return block.content;
  return (block.content ?? []).map((part) => part.text ?? "").join("");
}

/**
 * What the model is sent for server-filesystem's read_text_file: the server answers with
 * structuredContent `{ content }`, which goes to the model as JSON, as Claude Code sends it (R-M1).
 */
export const filesystemReadText = (content: string): string => JSON.stringify({ content });

/** A scripted `tool_use` block. */
export const toolCall = (id: string, name: string, input: Record<string, unknown> = {}) => ({
  type: "tool_use",
  id,
  name,
  input,
});
