import { blocksOf } from "./conversation-turns.js";
import type { ContentBlockParam, MessagesRequest } from "./request-schema.js";
import type { BrainRequest } from "./types.js";

/** Derives the simple facts a brain sees from a validated request. */
export function toBrainRequest(
  body: MessagesRequest,
  querySource: string | null,
  seed: number,
  apiKey = "",
): BrainRequest {
  const lastUser = findLast(body.messages, (m) => m.role === "user");
  const blocks = lastUser ? blocksOf(lastUser) : [];
  const texts = blocks.flatMap((b) => (b.type === "text" ? [b.text] : []));
  return {
    body,
    turnIndex: body.messages.filter((m) => m.role === "assistant").length,
    lastUserText: texts.length > 0 ? texts.join("\n") : null,
    lastToolResults: blocks.flatMap((b) =>
      b.type === "tool_result"
        ? [{ tool_use_id: b.tool_use_id, content: toolResultText(b.content), is_error: b.is_error === true }]
        : [],
    ),
    toolNames: (body.tools ?? []).map((t) => t.name),
    querySource,
    apiKey,
    seed,
  };
}

function toolResultText(content: Extract<ContentBlockParam, { type: "tool_result" }>["content"]): string {
  if (content === undefined) return "";
  if (typeof content === "string") return content;
  return content.flatMap((c) => (c.type === "text" ? [c.text] : [])).join("\n");
}

function findLast<T>(items: readonly T[], predicate: (item: T) => boolean): T | undefined {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (item !== undefined && predicate(item)) return item;
  }
  return undefined;
}
