import { blocksOf } from "./conversation-turns.js";
import type { CacheControl, ContentBlockParam, CountTokensRequest } from "./request-schema.js";
import { countTokens } from "./tokenizer.js";

/** Where a prompt position sits in the cache prefix order tools → system → messages (api doc §5). */
export type Section = "tools" | "system" | "messages";

/** One cacheable position of the prompt: a tool definition, a system block or a message block. */
export interface PromptPosition {
  section: Section;
  /** The API's path of the block, e.g. `messages.3.content.0` or `tools.2` (for error messages). */
  path: string;
  /** Canonical text that feeds the cache key: the block without `cache_control`, keys sorted. */
  canonical: string;
  tokens: number;
  cacheControl: CacheControl | null;
  /** Further markers folded into this position (inside a tool_result); they count toward the 4. */
  extraMarkers: number;
  /** A breakpoint may sit here (automatic caching walks back past ineligible blocks). */
  cacheable: boolean;
}

export interface PromptLayout {
  positions: PromptPosition[];
  /** Mixed into the key where the messages section starts: changing it invalidates messages only. */
  messagesConfig: string;
  /** Mixed into the key where the system section starts: changing it invalidates system + messages. */
  systemConfig: string;
  totalTokens: number;
}

/** Fixed token costs for blocks whose size the simulator does not measure. */
const IMAGE_TOKENS = 1500;
const BINARY_DOCUMENT_TOKENS = 1500;

export interface LayoutOptions {
  /**
   * Leave out thinking blocks of earlier turns (before the last user message that is not only
   * tool results): count_tokens ignores them (api doc §6), and older models strip them (§5).
   */
  stripPriorThinking?: boolean;
  /** The model's tokens per simulator token (ModelSpec.tokenFactor); each position is rounded up. */
  tokenFactor?: number;
}

/** Flattens a request body into its prompt positions, in cache prefix order. */
export function layoutPrompt(body: CountTokensRequest, options: LayoutOptions = {}): PromptLayout {
  const positions: PromptPosition[] = [];
  body.tools?.forEach((tool, i) => {
    // A deferred tool is not part of the prefix (the prompt-caching docs): it is in the model's
    // context only once a tool search loads it, so adding or removing one keeps the cache.
    if (tool.defer_loading === true) return;
    const { cache_control, ...rest } = tool;
    const description = typeof rest.description === "string" ? rest.description : "";
    const schema = "input_schema" in rest ? JSON.stringify(rest.input_schema) : "";
    positions.push({
      section: "tools",
      path: `tools.${i}`,
      canonical: canonicalJson(rest),
      tokens: countTokens(tool.name) + countTokens(description) + countTokens(schema),
      cacheControl: cache_control ?? null,
      extraMarkers: 0,
      cacheable: true,
    });
  });
  const system =
    typeof body.system === "string" ? [{ type: "text" as const, text: body.system }] : body.system;
  system?.forEach((block, i) => {
    positions.push(blockPosition("system", `system.${i}`, "system", block));
  });
  const currentTurnStart = options.stripPriorThinking ? lastRealUserMessage(body) : -1;
  let images = 0;
  body.messages.forEach((message, m) => {
    blocksOf(message).forEach((block, b) => {
      const thinking = block.type === "thinking" || block.type === "redacted_thinking";
      if (thinking && m < currentTurnStart) return;
      images += imageCount(block);
      positions.push(blockPosition("messages", `messages.${m}.content.${b}`, message.role, block));
    });
  });
  const factor = options.tokenFactor ?? 1;
  let totalTokens = 0;
  for (const p of positions) {
    if (factor !== 1) p.tokens = Math.ceil(p.tokens * factor);
    totalTokens += p.tokens;
  }
  return {
    positions,
    // Adding or removing an image anywhere invalidates the messages cache (api doc §5): the
    // count of images is part of the messages section's key, like tool_choice and thinking.
    messagesConfig: canonicalJson({
      tool_choice: body.tool_choice ?? null,
      thinking: body.thinking ?? null,
      images,
      // A top-level effort change rewrites the conversation's cache; a per-message effort marker
      // (effort per message page) is a message of its own and keeps the prefix before it.
      effort: (body as { output_config?: { effort?: unknown } | null }).output_config?.effort ?? null,
    }),
    // Turning citations or web search on or off invalidates the system and messages caches,
    // as the speed setting does; the tools' cache stays (prompt caching page, "What invalidates
    // the cache").
    systemConfig: canonicalJson({
      speed: body.speed ?? null,
      citations: citationsEnabled(body),
      web_search: (body.tools ?? []).some((t) =>
        String((t as { type?: unknown }).type).startsWith("web_search_"),
      ),
    }),
    totalTokens,
  };
}

/** Whether any document of the request has citations enabled. */
function citationsEnabled(body: CountTokensRequest): boolean {
  return body.messages.some((message) =>
    blocksOf(message).some((block) => documentsOf(block).some((doc) => doc.citations?.enabled === true)),
  );
}

/** The document blocks of a block (itself, or inside a tool result). */
export function documentsOf(block: ContentBlockParam): Extract<ContentBlockParam, { type: "document" }>[] {
  if (block.type === "document") return [block];
  if (block.type !== "tool_result" || !Array.isArray(block.content)) return [];
  return block.content.filter((inner) => inner.type === "document");
}

function imageCount(block: ContentBlockParam): number {
  if (block.type === "image") return 1;
  if (block.type !== "tool_result" || !Array.isArray(block.content)) return 0;
  return block.content.filter((inner) => inner.type === "image").length;
}

/** Index of the last user message that is not only tool results (-1 if none). */
function lastRealUserMessage(body: CountTokensRequest): number {
  for (let m = body.messages.length - 1; m >= 0; m--) {
    const message = body.messages[m];
    if (message?.role !== "user") continue;
    if (typeof message.content === "string" || message.content.some((b) => b.type !== "tool_result"))
      return m;
  }
  return -1;
}

function blockPosition(
  section: Section,
  path: string,
  role: string,
  block: ContentBlockParam,
): PromptPosition {
  const outer = "cache_control" in block ? (block.cache_control ?? null) : null;
  // Markers inside a tool_result's content sit at the tool_result's position (our granularity).
  const inner =
    block.type === "tool_result" && Array.isArray(block.content)
      ? block.content.flatMap((c) => (c.cache_control ? [c.cache_control] : []))
      : [];
  const markers = [...(outer ? [outer] : []), ...inner];
  const { cache_control: _ignored, ...rest } = block as ContentBlockParam & { cache_control?: unknown };
  return {
    section,
    path,
    extraMarkers: Math.max(0, markers.length - 1),
    // The role is part of the key: the same text said by the user or the assistant differs.
    canonical: `${role}:${canonicalJson(normaliseBlock(rest))}`,
    tokens: blockTokens(block),
    cacheControl: markers.at(-1) ?? null,
    cacheable: !(block.type === "thinking" || block.type === "redacted_thinking" || isEmptyText(block)),
  };
}

/** String content and a single text block with the same text are the same content (api doc §5). */
function normaliseBlock(block: Record<string, unknown>): Record<string, unknown> {
  if (block.type === "text") return { type: "text", text: block.text };
  if (block.type === "tool_result") {
    const content = block.content;
    const blocks =
      typeof content === "string"
        ? [{ type: "text", text: content }]
        : Array.isArray(content)
          ? content.map((c: Record<string, unknown>) => {
              const { cache_control: _drop, ...inner } = c;
              return normaliseBlock(inner);
            })
          : [];
    return { ...block, content: blocks, is_error: block.is_error === true };
  }
  return block;
}

function isEmptyText(block: ContentBlockParam): boolean {
  return block.type === "text" && block.text.length === 0;
}

/** Token cost of one content block under the simulator's tokenizer rule. */
function blockTokens(block: ContentBlockParam): number {
  switch (block.type) {
    case "text":
      return countTokens(block.text);
    case "image":
      return IMAGE_TOKENS;
    case "document": {
      const source = block.source as { type: string; data?: unknown };
      return source.type === "text" && typeof source.data === "string"
        ? countTokens(source.data)
        : BINARY_DOCUMENT_TOKENS;
    }
    case "tool_use":
      return countTokens(block.name) + countTokens(JSON.stringify(block.input));
    case "tool_result": {
      if (block.content === undefined) return 0;
      if (typeof block.content === "string") return countTokens(block.content);
      let sum = 0;
      for (const inner of block.content) sum += blockTokens(inner);
      return sum;
    }
    case "thinking":
      return countTokens(block.thinking);
    case "redacted_thinking":
      return Math.ceil(block.data.length / 4);
    default:
      return countTokens(JSON.stringify(block));
  }
}

/** JSON with object keys sorted, so key order never changes a cache key. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k];
    return sorted;
  });
}
