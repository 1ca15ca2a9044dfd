import type { Message } from "@forkloop/loop-core";
import type { BlockView, MessageView } from "./report-data.js";

/**
 * How much message text a page may carry (characters). A session report keeps nearly all of it;
 * a batch report shares one budget among its items so 10,000 items stay a page, not a dump.
 */
export class TextBudget {
  #remaining: number;
  readonly #perBlock: number;
  #cuts = 0;

  constructor(total: number, perBlock = total) {
    this.#remaining = total;
    this.#perBlock = perBlock;
  }

  /** How many texts were cut so far. */
  get cuts(): number {
    return this.#cuts;
  }

  /** `text`, or its start and a note of how much was left out. */
  take(text: string): string {
    const room = Math.max(0, Math.min(this.#remaining, this.#perBlock));
    if (text.length <= room) {
      this.#remaining -= text.length;
      return text;
    }
    this.#remaining -= room;
    this.#cuts++;
    return `${text.slice(0, room)}… [${text.length - room} more characters not in this report]`;
  }

  /** Room for `chars` more characters (taken if there is). */
  fits(chars: number): boolean {
    if (chars > Math.min(this.#remaining, this.#perBlock)) {
      this.#cuts++;
      return false;
    }
    this.#remaining -= chars;
    return true;
  }
}

/** Raster images only: an SVG can carry script, and the page shows images inline. */
const SHOWN_IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function blockOf(raw: unknown, budget: TextBudget): BlockView {
  const block = (raw ?? {}) as Record<string, unknown>;
  switch (block.type) {
    case "text":
      return { type: "text", text: budget.take(String(block.text ?? "")) };
    case "thinking":
      return { type: "thinking", text: budget.take(String(block.thinking ?? "")) };
    case "redacted_thinking":
      return { type: "other", label: "redacted thinking" };
    case "tool_use":
    case "server_tool_use":
      return {
        type: "tool_use",
        id: String(block.id ?? ""),
        name: String(block.name ?? ""),
        input: budget.take(JSON.stringify(block.input ?? {}, null, 2) ?? ""),
      };
    case "tool_result": {
      const content = block.content;
      return {
        type: "tool_result",
        toolUseId: String(block.tool_use_id ?? ""),
        isError: block.is_error === true,
        content:
          typeof content === "string"
            ? [{ type: "text", text: budget.take(content) }]
            : Array.isArray(content)
              ? content.map((part) => blockOf(part, budget))
              : [],
      };
    }
    case "image":
      return imageOf(block, budget);
    default:
      return { type: "other", label: String(block.type ?? "unknown block") };
  }
}

function imageOf(block: Record<string, unknown>, budget: TextBudget): BlockView {
  const source = (block.source ?? {}) as Record<string, unknown>;
  const mediaType = String(source.media_type ?? "");
  const data = source.type === "base64" && typeof source.data === "string" ? source.data : "";
  const bytes = Math.floor((data.length * 3) / 4);
  const shown = SHOWN_IMAGE_TYPES.has(mediaType) && BASE64.test(data) && budget.fits(data.length);
  return { type: "image", mediaType, data: shown ? data : null, bytes };
}

function noteOf(message: Message): string | null {
  switch (message.type) {
    case "user":
      if (message.interrupt) return "interrupt";
      return message.isMeta ? "meta" : null;
    case "assistant":
      return message.apiError ? `api error: ${message.apiError.message}` : null;
    case "system":
      return message.subtype;
  }
}

/** A transcript message as the page shows it; text beyond the budget is cut. */
export function toMessageView(message: Message, budget: TextBudget, note?: string): MessageView {
  const at = Date.parse(message.timestamp);
  let blocks: BlockView[];
  if (message.type === "system") {
    blocks = [{ type: "text", text: budget.take(message.content) }];
  } else {
    const content = message.message.content;
    blocks =
      typeof content === "string"
        ? [{ type: "text", text: budget.take(content) }]
        : (content as readonly unknown[]).map((block) => blockOf(block, budget));
  }
  return {
    uuid: message.uuid,
    role: message.type,
    at: Number.isFinite(at) ? at : null,
    note: note ?? noteOf(message),
    blocks,
  };
}
