import type Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import { toApiMessages } from "./api-messages.js";
import type { ContentBlockParam, Message, MessageParam, TextBlockParam } from "./messages.js";
import { takesSystemMessages, thinkingForModel } from "./model-catalog.js";
import type { Tool } from "./tool.js";

export type ThinkingConfigParam = Anthropic.Messages.ThinkingConfigParam;
export type ToolDefinition = Anthropic.Messages.Tool;
/** A tool definition as the API takes it (a custom tool's or a server tool's). */
export type ToolUnion = Anthropic.Messages.ToolUnion;
export type MessageCreateParams = Anthropic.Messages.MessageCreateParamsStreaming;

/** The API allows at most 4 cache breakpoints per request (api doc §5). */
const MAX_CACHE_BREAKPOINTS = 4;

export interface BuildRequestInput {
  readonly model: string;
  readonly systemPrompt: string | readonly TextBlockParam[];
  /** Tool definitions as sent: a request prefix's (R-F3), or `toolDefinitions(tools)`. */
  readonly tools: readonly ToolUnion[];
  readonly messages: readonly Message[];
  readonly maxOutputTokens: number;
  readonly thinking?: ThinkingConfigParam | undefined;
}

/**
 * The exact request body the loop sends. Deterministic: the same input gives the same bytes; the
 * tool definitions are sent as given (the request prefix's, R-F3). Cache breakpoints: the last
 * system block (tools + system stay one cached prefix) and the last cacheable block of the last
 * message (moves forward every turn, so each turn reads the previous turn's write).
 */
export function buildRequest(input: BuildRequestInput): MessageCreateParams {
  const system = buildSystemBlocks(input.systemPrompt);
  let thinking = thinkingForModel(input.model, input.thinking, input.maxOutputTokens);
  const systemMessages = takesSystemMessages(input.model);
  let apiMessages = toApiMessages(input.messages, {
    thinkingEnabled: isThinkingOn(thinking),
    systemMessages,
  });
  if (thinking?.type === "enabled" && openToolTurnLacksThinking(apiMessages)) {
    // API rule (api doc §8): with thinking enabled, the assistant turn answered by the trailing
    // tool results must start with its thinking block. After a model fallback stripped the
    // model-bound thinking (R-L8) it cannot; the API's own advice is to disable thinking for the
    // request, and then no thinking block may be sent at all (R-L17).
    thinking = undefined;
    apiMessages = toApiMessages(input.messages, { thinkingEnabled: false, systemMessages });
  }
  const messages = withMessageBreakpoint(apiMessages);
  trimBreakpoints(system, messages);
  const request: MessageCreateParams = {
    model: input.model,
    max_tokens: input.maxOutputTokens,
    system,
    messages,
    stream: true,
  };
  if (input.tools.length > 0) request.tools = [...input.tools];
  if (thinking) request.thinking = fitThinking(thinking, input.maxOutputTokens);
  return request;
}

function isThinkingOn(thinking: ThinkingConfigParam | undefined): boolean {
  return thinking !== undefined && thinking.type !== "disabled";
}

function openToolTurnLacksThinking(messages: readonly MessageParam[]): boolean {
  // A trailing system message (a hook's context after the results) is not the turn.
  const turns =
    messages.at(-1)?.role === ("system" as MessageParam["role"]) ? messages.slice(0, -1) : messages;
  const last = turns.at(-1);
  const assistant = turns.at(-2);
  if (last?.role !== "user" || assistant?.role !== "assistant") return false;
  if (typeof last.content === "string" || last.content[0]?.type !== "tool_result") return false;
  if (typeof assistant.content === "string") return true;
  const first = assistant.content[0];
  return first?.type !== "thinking" && first?.type !== "redacted_thinking";
}

/** System prompt as blocks with a breakpoint on the last non-empty one. */
export function buildSystemBlocks(systemPrompt: string | readonly TextBlockParam[]): TextBlockParam[] {
  const blocks: TextBlockParam[] =
    typeof systemPrompt === "string"
      ? systemPrompt.length > 0
        ? [{ type: "text", text: systemPrompt }]
        : []
      : systemPrompt.filter((block) => block.text.length > 0).map((block) => ({ ...block }));
  const last = blocks.at(-1);
  if (last && !last.cache_control)
    blocks[blocks.length - 1] = { ...last, cache_control: { type: "ephemeral" } };
  return blocks;
}

const definitionCache = new WeakMap<Tool, ToolDefinition>();
/** One conversion per schema: every session's Read shares one schema object (R-V3, 1,000 live sessions). */
const jsonSchemaCache = new WeakMap<object, Record<string, unknown>>();

function inputJSONSchema(tool: Tool): Record<string, unknown> {
  if (tool.inputJSONSchema !== undefined) return tool.inputJSONSchema as Record<string, unknown>;
  const cached = jsonSchemaCache.get(tool.inputSchema);
  if (cached) return cached;
  const converted = z.toJSONSchema(tool.inputSchema, { io: "input" }) as Record<string, unknown>;
  jsonSchemaCache.set(tool.inputSchema, converted);
  return converted;
}

/**
 * Tool definitions in a stable order (by name, duplicates dropped): any change in the tools
 * array invalidates the whole cache (api doc §5), so the same set must always serialize alike.
 */
export function toolDefinitions(tools: readonly Tool[]): ToolDefinition[] {
  const byName = new Map<string, Tool>();
  for (const tool of tools) if (!byName.has(tool.name)) byName.set(tool.name, tool);
  return [...byName.keys()].sort().map((name) => toolDefinition(byName.get(name)!));
}

export function toolDefinition(tool: Tool): ToolDefinition {
  const cached = definitionCache.get(tool);
  if (cached) return cached;
  const { $schema: _ignored, ...schema } = inputJSONSchema(tool);
  const definition: ToolDefinition = {
    name: tool.name,
    description: tool.description,
    input_schema: { type: "object", ...schema } as ToolDefinition["input_schema"],
  };
  definitionCache.set(tool, definition);
  return definition;
}

function isCacheable(block: ContentBlockParam): boolean {
  // The API rejects cache_control on thinking blocks and on empty text (api doc §5).
  if (block.type === "thinking" || block.type === "redacted_thinking") return false;
  if (block.type === "text" && block.text.length === 0) return false;
  return true;
}

function withMessageBreakpoint(messages: MessageParam[]): MessageParam[] {
  const last = messages.at(-1);
  if (!last || typeof last.content === "string") {
    if (last && typeof last.content === "string" && last.content.length > 0) {
      messages[messages.length - 1] = {
        ...last,
        content: [{ type: "text", text: last.content, cache_control: { type: "ephemeral" } }],
      } as MessageParam;
    }
    return messages;
  }
  const content = [...last.content];
  for (let index = content.length - 1; index >= 0; index--) {
    const block = content[index]!;
    if (!isCacheable(block)) continue;
    content[index] = { ...block, cache_control: { type: "ephemeral" } } as ContentBlockParam;
    messages[messages.length - 1] = { ...last, content } as MessageParam;
    break;
  }
  return messages;
}

/** Keep at most 4 breakpoints: drop the earliest system ones first (the later ones cover them). */
function trimBreakpoints(system: TextBlockParam[], messages: MessageParam[]): void {
  // Counted without a copy of any turn: this runs over the whole history for every request.
  let excess = -MAX_CACHE_BREAKPOINTS;
  for (const block of system) if (block.cache_control) excess++;
  for (let index = 0; index < messages.length; index++) {
    const content = messages[index]!.content;
    if (typeof content === "string") continue;
    for (let block = 0; block < content.length; block++)
      if ((content[block] as { cache_control?: unknown }).cache_control) excess++;
  }
  for (let index = 0; index < system.length && excess > 0; index++) {
    const block = system[index]!;
    if (!block.cache_control) continue;
    const { cache_control: _dropped, ...rest } = block;
    system[index] = rest;
    excess--;
  }
}

/** `budget_tokens` must stay below `max_tokens` (api doc §1); the minimum budget is 1024. */
function fitThinking(thinking: ThinkingConfigParam, maxTokens: number): ThinkingConfigParam {
  if (thinking.type !== "enabled" || thinking.budget_tokens < maxTokens) return thinking;
  return { ...thinking, budget_tokens: Math.max(1024, maxTokens - 1) };
}
