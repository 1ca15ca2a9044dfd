import { type ApiError, invalidRequest } from "./api-error.js";
import { type CountTokensRequest, type MessageParam, SERVER_BLOCK_TYPES } from "./request-schema.js";
import { checkImage } from "./validate-image.js";
import { checkPdf } from "./validate-pdf.js";

/** Which block types each role may send (a tool_use in a user message is a client bug). */
const BLOCKS_BY_ROLE: Readonly<Record<"user" | "assistant" | "system", readonly string[]>> = {
  user: ["text", "image", "document", "tool_result", "search_result", "container_upload"],
  assistant: [
    "text",
    "thinking",
    "redacted_thinking",
    "tool_use",
    "document",
    "compaction",
    ...SERVER_BLOCK_TYPES,
  ],
  system: ["text"],
};

const UNEXPECTED_SYSTEM_ROLE =
  'messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, not "system" as an input message role.';

export interface ContentRules {
  /** The `anthropic-version` header: 2026-10-21 refuses documents from the assistant and citations on user text. */
  version: string;
  /** `role: "system"` messages are accepted (models from 4.6 on; UNCONFIRMED which). */
  systemMessages: boolean;
  /** Effort-only system messages (per-message effort) are accepted: the model takes effort. */
  perMessageEffort?: boolean;
}

export function checkContent(body: CountTokensRequest, rules: ContentRules): ApiError | null {
  const lastIndex = body.messages.length - 1;
  const strictVersion = rules.version === "2026-10-21";
  for (const [m, message] of body.messages.entries()) {
    // An effort-only system message (empty content, `output_config`) sets per-message effort
    // (effort per message page); it is not an instruction and has no content to check.
    const effortOnly =
      message.role === "system" && message.content.length === 0 && message.output_config !== undefined;
    if (message.role === "system" && !rules.systemMessages && !(effortOnly && rules.perMessageEffort)) {
      // The API's words on a model without mid-conversation system messages, as clients quote
      // them (https://github.com/Maol-1997/cursor-claude-connector/issues/3 on Sonnet 4,
      // https://github.com/ianarawjo/ChainForge/issues/271 on Haiku 3).
      return invalidRequest(UNEXPECTED_SYSTEM_ROLE);
    }
    if (effortOnly) continue;
    if (message.role === "system") {
      const refusal = checkSystemMessage(message.content, m);
      if (refusal) return refusal;
      continue;
    }
    const prefill = m === lastIndex && message.role === "assistant";
    if (message.role === "user" && message.content.length === 0) {
      // A user run is one turn: an empty item passes when another item of the run has content.
      if (userRunHasContent(body.messages, m)) continue;
      return invalidRequest(`messages.${m}: user messages must have non-empty content`);
    }
    // Empty string and empty block list alike.
    if (message.content.length === 0 && !prefill) {
      return invalidRequest(
        `messages.${m}: all messages must have non-empty content except for the optional final assistant message`,
      );
    }
    if (prefill && endsWithWhitespace(message.content)) {
      return invalidRequest("messages: final assistant content cannot end with trailing whitespace");
    }
    if (typeof message.content === "string") {
      if (message.content.length > 0 && message.content.trim() === "" && !prefill) return whitespaceOnly();
      continue;
    }
    for (const [b, block] of message.content.entries()) {
      const at = `messages.${m}.content.${b}`;
      const media = checkImage(block, `${at}.${block.type}`) ?? checkPdf(block, at);
      if (media) return media;
      if (block.type === "text") {
        if (block.text.length === 0) {
          if (block.cache_control) {
            return invalidRequest(`${at}.text: cache_control cannot be set for empty text blocks`);
          }
          return invalidRequest("messages: text content blocks must be non-empty");
        }
        if (block.text.trim() === "") return whitespaceOnly();
        // Version 2026-10-21: citations are the model's, never the user's (SPEC; wording UNCONFIRMED).
        if (strictVersion && message.role === "user" && (block.citations?.length ?? 0) > 0) {
          return invalidRequest(`${at}.text.citations: citations are not permitted on user text blocks`);
        }
      }
      const allowed = BLOCKS_BY_ROLE[message.role].filter(
        (type) => !(strictVersion && message.role === "assistant" && type === "document"),
      );
      if (!allowed.includes(block.type)) {
        // Each role has its own block union in the API, so a misplaced block is an unknown tag.
        return invalidRequest(
          `${at}: Input tag '${block.type}' found using 'type' does not match any of the expected tags: ${allowed.map((t) => `'${t}'`).join(", ")}`,
        );
      }
    }
  }
  const system = body.system;
  if (Array.isArray(system)) {
    // Empty system blocks are refused like empty message text (the `system:` prefix is
    // UNCONFIRMED); a whitespace-only one only when it is a cache breakpoint, as client reports
    // show (a whitespace-only system block without cache_control is accepted).
    for (const [i, block] of system.entries()) {
      if (block.text.length === 0 && block.cache_control) {
        return invalidRequest(`system.${i}.text: cache_control cannot be set for empty text blocks`);
      }
      if (block.text.length === 0) return invalidRequest("system: text content blocks must be non-empty");
      if (block.text.trim() === "" && block.cache_control) {
        return invalidRequest("system: text content blocks must contain non-whitespace text");
      }
    }
  }
  return null;
}

/*
 * The sentences for a mid-conversation system message's content and an empty user turn are the
 * API's as a direct-API parity suite measured them on claude-sonnet-5 (2026-08-31):
 * https://github.com/kangminlee-maker/local-OAuth-CLI-API-adapter/blob/87ac1c5ed83001bee363ff8b17051fa4beaf3cc3/test/anthropic-messages-validation-parity.test.mjs
 * (which also saw an empty user item accepted inside a user run that has content elsewhere).
 */
function checkSystemMessage(content: MessageParam["content"], m: number): ApiError | null {
  if (content.length === 0)
    return invalidRequest(`messages.${m}: system content must contain at least one block`);
  const blocks = typeof content === "string" ? [{ type: "text" as const, text: content }] : content;
  if (blocks.some((block) => !SYSTEM_BLOCKS.includes(block.type))) {
    return invalidRequest(
      `messages.${m}: role 'system' supports text, tool_addition, and tool_removal blocks only`,
    );
  }
  return null;
}

/**
 * A system message's blank text is judged after its placement (validate-model-rules.ts): the
 * parity suite saw the placement sentence win over this one, and the head guidance too.
 */
export function checkSystemMessageText(body: CountTokensRequest): ApiError | null {
  for (const [m, message] of body.messages.entries()) {
    if (message.role !== "system") continue;
    const blocks =
      typeof message.content === "string"
        ? [{ type: "text" as const, text: message.content }]
        : message.content;
    if (blocks.some((block) => block.type === "text" && block.text.trim() === "")) {
      return invalidRequest(`messages.${m}: system text blocks must contain non-whitespace text`);
    }
  }
  return null;
}

const SYSTEM_BLOCKS: readonly string[] = ["text", "tool_addition", "tool_removal"];

function userRunHasContent(messages: readonly MessageParam[], m: number): boolean {
  let start = m;
  while (start > 0 && messages[start - 1]?.role === "user") start--;
  let end = m;
  while (end < messages.length - 1 && messages[end + 1]?.role === "user") end++;
  return messages.slice(start, end + 1).some((message) => message.content.length > 0);
}

function whitespaceOnly(): ApiError {
  return invalidRequest("messages: text content blocks must contain non-whitespace text");
}

/** A prefill whose text ends in whitespace (the API refuses it: the model would continue oddly). */
function endsWithWhitespace(content: MessageParam["content"]): boolean {
  const last = typeof content === "string" ? content : content.at(-1);
  const text = typeof last === "string" ? last : last?.type === "text" ? last.text : "";
  return text.length > 0 && /\s$/.test(text);
}
