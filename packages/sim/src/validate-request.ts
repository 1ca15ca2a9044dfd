import { type ApiError, apiError, invalidRequest } from "./api-error.js";
import { type Breakpoint, findBreakpoints } from "./cache-breakpoints.js";
import { applyContextEdits } from "./context-editing.js";
import { checkCitations } from "./document-citations.js";
import type { FileLookup } from "./files.js";
import type { IssuedThinking } from "./issued-thinking.js";
import { effectiveContextWindow, type ModelRegistry, type ModelSpec } from "./model-registry.js";
import { layoutPrompt, type PromptLayout } from "./prompt-layout.js";
import { outputFormatSchema } from "./reply-constraints.js";
import {
  type CountTokensRequest,
  countTokensRequestSchema,
  type MessagesRequest,
  messagesRequestSchema,
  SERVER_BLOCK_TYPES,
} from "./request-schema.js";
import { resolveFileSources } from "./resolve-file-sources.js";
import { describeIssue } from "./schema-issues.js";
import type { WebFixtures } from "./server-tools.js";
import { checkContent, checkSystemMessageText } from "./validate-content.js";
import { type ContextEditing, checkContextManagement } from "./validate-context-management.js";
import { checkImageDimensions } from "./validate-image-dimensions.js";
import { checkModelRules, checkSystemMessages } from "./validate-model-rules.js";
import { checkOutputSchemas } from "./validate-output-schema.js";
import {
  checkIssuedThinking,
  checkThinkingBlocks,
  checkThinkingConfig,
  checkThinkingFirst,
  thinkingOn,
} from "./validate-thinking.js";
import { checkToolDefinitions } from "./validate-tool-definitions.js";
import { checkToolReferences } from "./validate-tool-references.js";
import { checkToolSets } from "./validate-tool-sets.js";
import { checkToolPairing, checkTools } from "./validate-tool-use.js";

export type { MessagesRequest } from "./request-schema.js";

export interface RequestContext {
  registry: ModelRegistry;
  /** The `anthropic-version` header (already checked to be a supported value). */
  version: string;
  /** The `anthropic-beta` header, split. */
  betas: readonly string[];
  /** Thinking the simulator issued with each tool_use id (to catch dropped thinking blocks). */
  issuedThinking?: IssuedThinking;
  /** The Files API's files this request's key can read (`file_id` sources, R-D4). */
  files?: FileLookup;
  /** The bytes (base64) of the images URL sources may name (the `web` fixtures' `images`). */
  images?: WebFixtures["images"];
}

export interface ValidRequest<B> {
  /** The body as the model sees it: after `context_management` edits, if any (api doc §9). */
  body: B;
  model: ModelSpec;
  /** Laid out over the edited body, so the cache key covers the edited prompt. */
  layout: PromptLayout;
  breakpoints: Breakpoint[];
  /** Present when the request carried `context_management`. */
  contextManagement?: ContextEditing;
}

export type Validation<B> = { ok: true; value: ValidRequest<B> } | { ok: false; error: ApiError };

/** Validates a `POST /v1/messages` body as strictly as the API (R-D2). */
export function validateMessagesRequest(raw: unknown, ctx: RequestContext): Validation<MessagesRequest> {
  const parsed = messagesRequestSchema.safeParse(raw);
  if (!parsed.success) return fail(describeZod(parsed.error.issues, raw));
  const body = parsed.data;
  const common = validateCommon(body, raw, ctx, "messages");
  if (!common.ok) return common;
  const { model } = common.value;
  const error =
    checkMaxTokens(body, model) ??
    checkSampling(body, model, ctx) ??
    checkThinkingConfig(body, model, ctx) ??
    checkThinkingFirst(body) ??
    checkIssuedThinking(body, ctx.issuedThinking) ??
    checkPrefill(body, model) ??
    checkModelRules(body, model, ctx.betas);
  if (error) return { ok: false, error };
  return common;
}

/** Validates a `POST /v1/messages/count_tokens` body (no max_tokens, api doc §6). */
export function validateCountTokensRequest(
  raw: unknown,
  ctx: RequestContext,
): Validation<CountTokensRequest> {
  const parsed = countTokensRequestSchema.safeParse(raw);
  if (!parsed.success) return fail(describeZod(parsed.error.issues, raw));
  return validateCommon(parsed.data, raw, ctx, "count_tokens");
}

function validateCommon<B extends CountTokensRequest>(
  body: B,
  raw: unknown,
  ctx: RequestContext,
  kind: "messages" | "count_tokens",
): Validation<B> {
  const model = ctx.registry.resolve(body.model);
  // A retired model is gone for inference: the API answers as for an unknown id (model
  // deprecations page: "Requests to retired models will fail"), R-D1.
  if (!model || model.retired) return { ok: false, error: apiError(404, `model: ${body.model}`) };
  if (body.messages.length === 0) return fail("messages: at least one message is required");
  const error =
    checkToolDefinitions(body, raw) ??
    checkBetaFields(body, ctx.betas) ??
    checkTools(body) ??
    checkToolSets(body) ??
    checkContent(body, {
      version: ctx.version,
      systemMessages: model.supportsSystemMessages !== false,
      perMessageEffort: model.effort === undefined || model.effort.length > 0,
    }) ??
    checkSystemMessages(body, model, ctx.betas) ??
    checkSystemMessageText(body) ??
    checkImageDimensions(body, ctx.images) ??
    checkToolPairing(body) ??
    checkToolReferences(body) ??
    checkThinkingBlocks(body) ??
    checkContextManagement(body, ctx.betas) ??
    checkCitations(body) ??
    checkOutputSchemas(body) ??
    checkContainer(body);
  if (error) return { ok: false, error };
  // From here on the prompt is the request with its file_id sources read (R-D4).
  const resolved = ctx.files ? resolveFileSources(body, ctx.files) : { ok: true as const, body };
  if (!resolved.ok) return resolved;
  const prompt = resolved.body;
  // Context edits measure each intermediate body, and the original and edited bodies are needed
  // again below: lay each body out once (a layout walks and serialises the whole prompt).
  const layouts = new Map<B, PromptLayout>();
  const layoutOf = (b: B): PromptLayout => {
    let layout = layouts.get(b);
    if (layout === undefined) {
      layout = layoutPrompt(b, {
        stripPriorThinking: kind === "count_tokens" || model.keepsPriorThinking === false,
        tokenFactor: model.tokenFactor ?? 1,
      });
      layouts.set(b, layout);
    }
    return layout;
  };
  // Context edits run server-side before counting and caching (api doc §9).
  const edited = prompt.context_management
    ? applyContextEdits(prompt, prompt.context_management, (b) => layoutOf(b).totalTokens)
    : null;
  const seen = edited?.body ?? prompt;
  const layout = layoutOf(seen);
  const found = findBreakpoints(layout, seen.cache_control ?? null);
  if (!found.ok) return found;
  const window = effectiveContextWindow(model, ctx.betas);
  if (layout.totalTokens > window) {
    return fail(`prompt is too long: ${layout.totalTokens} tokens > ${window} maximum`);
  }
  const value: ValidRequest<B> = { body: seen, model, layout, breakpoints: found.breakpoints };
  if (edited) {
    value.contextManagement = {
      appliedEdits: edited.appliedEdits,
      originalInputTokens: layoutOf(prompt).totalTokens,
    };
  }
  return { ok: true, value };
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
    const structured = outputFormatSchema(body) !== undefined;
    if (body.stream === true || body.thinking?.type === "enabled" || forced || structured) {
      return invalidRequest(
        "max_tokens: 0 is only supported for cache pre-warming requests without streaming, thinking, forced tool use or output_config.format",
      );
    }
  }
  return null;
}

function checkSampling(body: MessagesRequest, model: ModelSpec, ctx: RequestContext): ApiError | null {
  // Version 2026-10-21 removed the sampling parameters (api doc §0).
  if (ctx.version === "2026-10-21") {
    for (const field of ["temperature", "top_p", "top_k"] as const) {
      if (body[field] !== undefined) return invalidRequest(`${field}: Extra inputs are not permitted`);
    }
    return null;
  }
  const { temperature, top_p, top_k } = body;
  // The registry's models (Opus 4.1 and later) take one of the two, not both.
  if (temperature !== undefined && top_p !== undefined) {
    return invalidRequest(
      "`temperature` and `top_p` cannot both be specified for this model. Please use only one.",
    );
  }
  if (thinkingOn(body) && temperature !== undefined && temperature !== 1) {
    return invalidRequest(
      "`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility",
    );
  }
  // Models after Opus 4.6 refuse any non-default sampling value (migration guide, "Migrating to
  // Claude Opus 4.7"): temperature passes only at its default 1.0; top_p has no default to match,
  // so any top_p is refused, 1.0 included, and so is any top_k. Measured live on Opus 4.7/5,
  // Sonnet 5 and Fable 5, with the three sentences below
  // (https://github.com/kangwoo/aimon-core/blob/320fbbc0aacaf6c0928439969418d97ac9ea6bf4/docs/design/llm/anthropic-sampling-capabilities.md
  // §2.1-2.2: temperature 1.0 → 200, top_p 1.0 → 400; the temperature body also in Mixpeal/anthropic-sdk#11).
  if (!model.thinking.enabled) {
    if (temperature !== undefined && temperature !== 1) {
      return invalidRequest("`temperature` is deprecated for this model.");
    }
    if (top_p !== undefined) return invalidRequest("`top_p` is deprecated for this model.");
    if (top_k !== undefined) return invalidRequest("`top_k` is deprecated for this model.");
  }
  return null;
}

function checkPrefill(body: MessagesRequest, model: ModelSpec): ApiError | null {
  const last = lastNonSystem(body);
  // An empty trailing assistant turn prefills nothing: the API accepts it on a model without
  // prefill, as a direct-API parity suite measured on claude-sonnet-5 (`content: []`).
  const prefills = last?.role === "assistant" && !(Array.isArray(last.content) && last.content.length === 0);
  if (prefills && !model.supportsPrefill && !continuesPausedTurn(body)) {
    return invalidRequest(
      "This model does not support assistant message prefill. The conversation must end with a user message.",
    );
  }
  return null;
}

/**
 * A `pause_turn` reply is sent back as-is to let the model continue (SDK 1.14's StopReason docs;
 * the server-tools docs, on 4.6+ models too): that trailing assistant turn is a continuation,
 * not a prefill. The simulator knows it by what only a paused server-tool loop leaves in a turn,
 * a server tool block in the trailing assistant messages (same-role turns merge); the API's own
 * criterion is UNCONFIRMED.
 */
function continuesPausedTurn(body: MessagesRequest): boolean {
  for (let i = body.messages.length - 1; i >= 0; i--) {
    const message = body.messages[i];
    if (!message || message.role === "system") continue;
    if (message.role !== "assistant") return false;
    const content = message.content;
    if (typeof content !== "string" && content.some((block) => isServerBlock(block.type))) return true;
  }
  return false;
}

function isServerBlock(type: string): boolean {
  return (SERVER_BLOCK_TYPES as readonly string[]).includes(type);
}

function lastNonSystem(body: CountTokensRequest): CountTokensRequest["messages"][number] | undefined {
  for (let i = body.messages.length - 1; i >= 0; i--) {
    const m = body.messages[i];
    if (m && m.role !== "system") return m;
  }
  return undefined;
}

type Issue = Parameters<typeof describeIssue>[0];

/**
 * Which top-level field's fault the API reports first when several are wrong: known fields in
 * this order, then fields not listed, then unknown keys — as a direct-API parity suite derived it
 * pair by pair (claude-sonnet-5, 2026-08-31; source in schema-issues.ts).
 */
const REPORT_ORDER: readonly string[] = [
  "model",
  "tool_choice",
  "tools",
  "messages",
  "system",
  "thinking",
  "output_config",
  "cache_control",
  "max_tokens",
  "metadata",
  "stop_sequences",
  "temperature",
  "service_tier",
  "top_k",
  "top_p",
  "stream",
  "container",
  "inference_geo",
];

function reportRank(issue: Issue): number {
  if (issue.code === "unrecognized_keys" && issue.path.length === 0) return REPORT_ORDER.length + 1;
  const at = REPORT_ORDER.indexOf(String(issue.path[0]));
  return at === -1 ? REPORT_ORDER.length : at;
}

function describeZod(issues: readonly Issue[], raw: unknown): string {
  const first = issues.reduce<Issue | undefined>(
    (best, issue) => (best === undefined || reportRank(issue) < reportRank(best) ? issue : best),
    undefined,
  );
  return first ? describeIssue(first, raw) : "Invalid request body";
}

/**
 * Beta-only fields (api doc §1) without their beta are unknown fields to the API. Which beta
 * unlocks `mcp_servers` and `output_format` follows the SDKs' beta names; the wording is
 * UNCONFIRMED (context_management: validate-context-management.ts).
 */
function checkBetaFields(body: CountTokensRequest, betas: readonly string[]): ApiError | null {
  if (body.output_format != null && !betas.some((b) => b.startsWith("structured-outputs-"))) {
    return invalidRequest("output_format: Extra inputs are not permitted");
  }
  if (body.mcp_servers != null && !betas.some((b) => b.startsWith("mcp-client-"))) {
    return invalidRequest("mcp_servers: Extra inputs are not permitted");
  }
  return null;
}

function fail(message: string): { ok: false; error: ApiError } {
  return { ok: false, error: invalidRequest(message) };
}

/**
 * A container named by id only makes sense beside the code execution tool; the sentence is the
 * API's as a direct-API parity suite measured it (claude-sonnet-5, 2026-08-31):
 * https://github.com/kangminlee-maker/local-OAuth-CLI-API-adapter/blob/87ac1c5ed83001bee363ff8b17051fa4beaf3cc3/test/anthropic-messages-validation-parity.test.mjs
 */
function checkContainer(body: CountTokensRequest): ApiError | null {
  // count_tokens takes no container: only a Messages body carries one.
  if (!("container" in body) || typeof body.container !== "string") return null;
  const codeExecution = (body.tools ?? []).some(
    (tool) => typeof tool.type === "string" && tool.type.startsWith("code_execution_"),
  );
  if (codeExecution) return null;
  return invalidRequest(
    "container: Container identifier can only be provided when using the code execution tool",
  );
}
