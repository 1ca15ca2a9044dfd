import { type ApiError, apiError, invalidRequest } from "./api-error.js";
import { type Breakpoint, findBreakpoints } from "./cache-breakpoints.js";
import type { IssuedThinking } from "./issued-thinking.js";
import { effectiveContextWindow, type ModelRegistry, type ModelSpec } from "./model-registry.js";
import { layoutPrompt, type PromptLayout } from "./prompt-layout.js";
import {
  type ContentBlockParam,
  type CountTokensRequest,
  countTokensRequestSchema,
  describeIssue,
  type MessagesRequest,
  messagesRequestSchema,
} from "./request-schema.js";
import { isValidThinkingSignature } from "./thinking-signature.js";

export type { MessagesRequest } from "./request-schema.js";

export interface RequestContext {
  registry: ModelRegistry;
  /** The `anthropic-version` header (already checked to be a supported value). */
  version: string;
  /** The `anthropic-beta` header, split. */
  betas: readonly string[];
  /** Thinking the simulator issued with each tool_use id (to catch dropped thinking blocks). */
  issuedThinking?: IssuedThinking;
}

export interface ValidRequest<B> {
  body: B;
  model: ModelSpec;
  layout: PromptLayout;
  breakpoints: Breakpoint[];
}

export type Validation<B> = { ok: true; value: ValidRequest<B> } | { ok: false; error: ApiError };

/** Validates a `POST /v1/messages` body as strictly as the API (issue 2 point 2). */
export function validateMessagesRequest(raw: unknown, ctx: RequestContext): Validation<MessagesRequest> {
  const parsed = messagesRequestSchema.safeParse(raw);
  if (!parsed.success) return fail(describeZod(parsed.error.issues));
  const body = parsed.data;
  const common = validateCommon(body, ctx, "messages");
  if (!common.ok) return common;
  const { model } = common.value;
  const error =
    checkMaxTokens(body, model) ??
    checkSampling(body, ctx) ??
    checkThinkingConfig(body, model, ctx) ??
    checkThinkingFirst(body) ??
    checkIssuedThinking(body, ctx.issuedThinking) ??
    checkPrefill(body, model);
  if (error) return { ok: false, error };
  return { ok: true, value: { ...common.value, body } };
}

/** Validates a `POST /v1/messages/count_tokens` body (no max_tokens, api doc §6). */
export function validateCountTokensRequest(
  raw: unknown,
  ctx: RequestContext,
): Validation<CountTokensRequest> {
  const parsed = countTokensRequestSchema.safeParse(raw);
  if (!parsed.success) return fail(describeZod(parsed.error.issues));
  return validateCommon(parsed.data, ctx, "count_tokens");
}

function validateCommon<B extends CountTokensRequest>(
  body: B,
  ctx: RequestContext,
  kind: "messages" | "count_tokens",
): Validation<B> {
  const model = ctx.registry.resolve(body.model);
  if (!model) return { ok: false, error: apiError(404, `model: ${body.model}`) };
  if (body.messages.length === 0) return fail("messages: at least one message is required");
  const error = checkTools(body) ?? checkContent(body) ?? checkToolPairing(body) ?? checkThinkingBlocks(body);
  if (error) return { ok: false, error };
  const layout = layoutPrompt(body, {
    stripPriorThinking: kind === "count_tokens" || model.keepsPriorThinking === false,
  });
  const found = findBreakpoints(layout, body.cache_control ?? null);
  if (!found.ok) return found;
  const window = effectiveContextWindow(model, ctx.betas);
  if (layout.totalTokens > window) {
    return fail(`prompt is too long: ${layout.totalTokens} tokens > ${window} maximum`);
  }
  return { ok: true, value: { body, model, layout, breakpoints: found.breakpoints } };
}

function checkMaxTokens(body: MessagesRequest, model: ModelSpec): ApiError | null {
  if (body.max_tokens > model.maxOutputTokens) {
    return invalidRequest(
      `max_tokens: ${body.max_tokens} > ${model.maxOutputTokens}, which is the maximum allowed number of output tokens for this model`,
    );
  }
  if (body.max_tokens === 0) {
    // max_tokens 0 is a cache pre-warm; it cannot stream, think or force a tool (api doc §1).
    const forced = body.tool_choice?.type === "any" || body.tool_choice?.type === "tool";
    if (body.stream === true || body.thinking?.type === "enabled" || forced) {
      return invalidRequest(
        "max_tokens: 0 is only supported for cache pre-warming requests without streaming, thinking or forced tool use",
      );
    }
  }
  return null;
}

function checkSampling(body: MessagesRequest, ctx: RequestContext): ApiError | null {
  // Version 2026-10-21 removed the sampling parameters (api doc §0).
  if (ctx.version !== "2026-10-21") return null;
  for (const field of ["temperature", "top_p", "top_k"] as const) {
    if (body[field] !== undefined) return invalidRequest(`${field}: Extra inputs are not permitted`);
  }
  return null;
}

function checkThinkingConfig(body: MessagesRequest, model: ModelSpec, ctx: RequestContext): ApiError | null {
  const thinking = body.thinking;
  if (!thinking) return null;
  if (thinking.type === "enabled") {
    if (!model.thinking.enabled) {
      return invalidRequest(
        '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.',
      );
    }
    if (thinking.budget_tokens < 1024) {
      return invalidRequest("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024");
    }
    // With interleaved thinking the context window is the limit instead (api doc §8).
    const interleaved = ctx.betas.includes("interleaved-thinking-2025-05-14");
    if (!interleaved && thinking.budget_tokens >= body.max_tokens) {
      return invalidRequest(
        "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size",
      );
    }
  }
  if (thinking.type === "adaptive" && !model.thinking.adaptive) {
    return invalidRequest("adaptive thinking is not supported on this model");
  }
  if (thinking.type === "disabled" && !model.thinking.disabled) {
    return invalidRequest('"thinking.type.disabled" is not supported for this model.');
  }
  const forced = body.tool_choice?.type === "any" || body.tool_choice?.type === "tool";
  if (thinkingOn(body) && forced) {
    return invalidRequest("Thinking may not be enabled when tool_choice forces tool use.");
  }
  return null;
}

/** Whether the request has thinking on, so replies may carry thinking blocks. */
export function thinkingOn(body: CountTokensRequest): boolean {
  const type = body.thinking?.type;
  return type === "enabled" || type === "adaptive";
}

/**
 * With thinking enabled, the assistant turn that the trailing tool results answer must start with
 * its thinking block: a client that drops thinking blocks mid tool loop gets this 400 (api doc §8).
 */
function checkThinkingFirst(body: MessagesRequest): ApiError | null {
  if (body.thinking?.type !== "enabled") return null;
  const turns = turnsOf(body);
  const last = turns.at(-1);
  const assistant = turns.at(-2);
  if (last?.role !== "user" || assistant?.role !== "assistant") return null;
  if (last.blocks[0]?.block.type !== "tool_result") return null;
  const first = assistant.blocks[0];
  if (!first || first.block.type === "thinking" || first.block.type === "redacted_thinking") return null;
  return invalidRequest(
    `messages.${first.m}.content.${first.b}.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first.block.type}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking`,
  );
}

/** The latest assistant turn must carry the thinking issued with its tool_use, unmodified and in order. */
function checkIssuedThinking(body: MessagesRequest, issued: IssuedThinking | undefined): ApiError | null {
  if (!issued || !thinkingOn(body)) return null;
  const turn = turnsOf(body).findLast((t) => t.role === "assistant");
  if (!turn) return null;
  const toolUse = turn.blocks.find(({ block }) => block.type === "tool_use" && issued.lookup(block.id));
  if (toolUse?.block.type !== "tool_use") return null;
  const expected = issued.lookup(toolUse.block.id) ?? [];
  const actual = turn.blocks.flatMap(({ block }) => (block.type === "thinking" ? [block.signature] : []));
  if (actual.length === expected.length && actual.every((s, i) => s === expected[i])) return null;
  const first = turn.blocks[0];
  return invalidRequest(
    `messages.${first?.m ?? turn.firstMessage}.content.${first?.b ?? 0}: \`thinking\` or \`redacted_thinking\` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.`,
  );
}

function checkTools(body: CountTokensRequest): ApiError | null {
  const names = new Set<string>();
  for (const tool of body.tools ?? []) {
    if (names.has(tool.name)) return invalidRequest("tools: Tool names must be unique.");
    names.add(tool.name);
  }
  const choice = body.tool_choice;
  if (choice?.type === "tool" && !names.has(choice.name)) {
    return invalidRequest(`tool_choice: Tool '${choice.name}' not found in tools`);
  }
  return null;
}

function checkPrefill(body: MessagesRequest, model: ModelSpec): ApiError | null {
  const last = lastNonSystem(body);
  if (last?.role === "assistant" && !model.supportsPrefill) {
    return invalidRequest(
      "This model does not support assistant message prefill. The conversation must end with a user message.",
    );
  }
  return null;
}

function lastNonSystem(body: CountTokensRequest): CountTokensRequest["messages"][number] | undefined {
  for (let i = body.messages.length - 1; i >= 0; i--) {
    const m = body.messages[i];
    if (m && m.role !== "system") return m;
  }
  return undefined;
}

function checkContent(body: CountTokensRequest): ApiError | null {
  const lastIndex = body.messages.length - 1;
  for (const [m, message] of body.messages.entries()) {
    const empty =
      typeof message.content === "string" ? message.content.length === 0 : message.content.length === 0;
    if (empty && !(m === lastIndex && message.role === "assistant")) {
      return invalidRequest(
        `messages.${m}: all messages must have non-empty content except for the optional final assistant message`,
      );
    }
    if (typeof message.content === "string") continue;
    for (const [b, block] of message.content.entries()) {
      const media = checkMediaSize(block, `messages.${m}.content.${b}`);
      if (media) return media;
      if (block.type === "text" && block.text.length === 0) {
        if (block.cache_control) {
          return invalidRequest(
            `messages.${m}.content.${b}.text: cache_control cannot be set for empty text blocks`,
          );
        }
        return invalidRequest("messages: text content blocks must be non-empty");
      }
      if (message.role === "system" && block.type !== "text") {
        return invalidRequest(`messages.${m}.content.${b}: system messages may only contain text blocks`);
      }
    }
  }
  const system = body.system;
  if (Array.isArray(system)) {
    for (const [i, block] of system.entries()) {
      if (block.text.length === 0 && block.cache_control) {
        return invalidRequest(`system.${i}.text: cache_control cannot be set for empty text blocks`);
      }
    }
  }
  return null;
}

/** The API's per-image limit; clients withhold and recover from this error (SPEC R-L9). */
const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

function checkMediaSize(block: ContentBlockParam, path: string): ApiError | null {
  if (block.type === "tool_result" && Array.isArray(block.content)) {
    for (const [i, inner] of block.content.entries()) {
      const error = checkMediaSize(inner, `${path}.content.${i}`);
      if (error) return error;
    }
    return null;
  }
  if (block.type !== "image") return null;
  const source = block.source as { type: string; data?: unknown };
  if (source.type !== "base64" || typeof source.data !== "string") return null;
  const padding = source.data.endsWith("==") ? 2 : source.data.endsWith("=") ? 1 : 0;
  const bytes = Math.floor((source.data.length * 3) / 4) - padding;
  if (bytes <= MAX_IMAGE_BYTES) return null;
  return invalidRequest(
    `${path}.image.source.base64: image exceeds 5 MB maximum: ${bytes} bytes > ${MAX_IMAGE_BYTES} bytes`,
  );
}

interface Turn {
  role: "user" | "assistant";
  /** Index of the first message of the turn (same-role messages are merged, api doc §1). */
  firstMessage: number;
  blocks: { m: number; b: number; block: ContentBlockParam }[];
}

/** Consecutive same-role messages form one turn; `role: "system"` messages are transparent. */
function turnsOf(body: CountTokensRequest): Turn[] {
  const turns: Turn[] = [];
  body.messages.forEach((message, m) => {
    if (message.role === "system") return;
    const blocks: ContentBlockParam[] =
      typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
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

/**
 * Every tool_use must be answered by a tool_result at the START of the next user turn, and every
 * tool_result must answer a tool_use of the previous assistant turn (the API's wording).
 */
function checkToolPairing(body: CountTokensRequest): ApiError | null {
  const turns = turnsOf(body);
  const seen = new Set<string>();
  for (const turn of turns) {
    for (const { m, b, block } of turn.blocks) {
      if (block.type !== "tool_use") continue;
      if (seen.has(block.id))
        return invalidRequest(`messages.${m}.content.${b}: \`tool_use\` ids must be unique`);
      seen.add(block.id);
    }
  }
  for (const [t, turn] of turns.entries()) {
    if (turn.role !== "user") continue;
    const previous = turns[t - 1];
    const offered = new Set<string>();
    if (previous) {
      for (const { block } of previous.blocks) if (block.type === "tool_use") offered.add(block.id);
    }
    for (const { m, b, block } of turn.blocks) {
      if (block.type === "tool_result" && !offered.has(block.tool_use_id)) {
        return invalidRequest(
          `messages.${m}.content.${b}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${block.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
        );
      }
    }
  }
  for (const [t, turn] of turns.entries()) {
    if (turn.role !== "assistant") continue;
    const next = turns[t + 1];
    // A trailing assistant turn is a prefill; its tool_use cannot be answered yet.
    if (!next) continue;
    const answered = new Set<string>();
    for (const { block } of next.blocks) {
      if (block.type !== "tool_result") break;
      answered.add(block.tool_use_id);
    }
    const missing = turn.blocks.flatMap(({ block }) =>
      block.type === "tool_use" && !answered.has(block.id) ? [block.id] : [],
    );
    if (missing.length > 0) {
      const at = turn.blocks.at(-1)?.m ?? turn.firstMessage;
      return invalidRequest(
        `messages.${at}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
      );
    }
  }
  return null;
}

/** Thinking blocks must come back exactly as the simulator signed them (api doc §8). */
function checkThinkingBlocks(body: CountTokensRequest): ApiError | null {
  let latestAssistant = -1;
  body.messages.forEach((message, m) => {
    if (message.role === "assistant") latestAssistant = m;
  });
  for (const [m, message] of body.messages.entries()) {
    if (typeof message.content === "string") continue;
    for (const [b, block] of message.content.entries()) {
      if (block.type === "thinking" && message.role !== "assistant") {
        return invalidRequest(
          `messages.${m}.content.${b}: thinking blocks may only appear in assistant messages`,
        );
      }
      if (block.type !== "thinking" || isValidThinkingSignature(block.thinking, block.signature)) continue;
      if (m === latestAssistant) {
        return invalidRequest(
          `messages.${m}.content.${b}: \`thinking\` or \`redacted_thinking\` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.`,
        );
      }
      return invalidRequest(`messages.${m}.content.${b}: Invalid \`signature\` in \`thinking\` block`);
    }
  }
  return null;
}

function describeZod(issues: readonly Parameters<typeof describeIssue>[0][]): string {
  const first = issues[0];
  return first ? describeIssue(first) : "Invalid request body";
}

function fail(message: string): { ok: false; error: ApiError } {
  return { ok: false, error: invalidRequest(message) };
}
