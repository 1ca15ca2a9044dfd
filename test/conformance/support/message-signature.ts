/**
 * Signatures of Agent SDK messages (the same as `claude -p`'s stream-json lines), by which two
 * runs' messages are aligned: `assistant[tool_use:Read]`, `user@sub[tool_result]`,
 * `result/success`, `stream_event/content_block_delta:text_delta`. Shared by both harnesses.
 */

/**
 * What field differences are reported under: the signature without the query number, the
 * content blocks and the tool name (`assistant`, `hook:PreToolUse`, `result/success`), so one
 * allowlist entry names a field of a kind of message wherever it appears.
 */
export function scopeOf(signature: string): string {
  return signature
    .replace(/^q\d+:/, "")
    .replace(/\[[^\]]*\]$/, "")
    .replace(/\([^)]*\)$/, "");
}

interface Block {
  type?: string;
  name?: string;
}

export function messageSignature(message: Record<string, unknown>): string {
  const type = String(message.type);
  const sub = message.parent_tool_use_id ? "@sub" : "";
  switch (type) {
    case "system":
    case "result":
      return `${type}/${String(message.subtype)}`;
    case "assistant":
    case "user": {
      const inner = message.message as { content?: string | Block[] } | undefined;
      const content = inner?.content;
      const blocks = typeof content === "string" ? "text" : (content ?? []).map(blockSignature).join(",");
      return `${type}${sub}[${blocks}]`;
    }
    case "stream_event": {
      const event = message.event as
        | { type?: string; content_block?: Block; delta?: { type?: string } }
        | undefined;
      const detail = event?.content_block?.type ?? event?.delta?.type;
      return `stream_event${sub}/${event?.type}${detail ? `:${detail}` : ""}`;
    }
    default:
      return message.subtype === undefined ? type : `${type}/${String(message.subtype)}`;
  }
}

function blockSignature(block: Block): string {
  return block.name ? `${block.type}:${block.name}` : String(block.type);
}
