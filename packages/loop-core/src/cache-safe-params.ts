import type Anthropic from "@anthropic-ai/sdk";
import { buildSystemBlocks, type ThinkingConfigParam, toolDefinitions } from "./build-request.js";
import type { Message, TextBlockParam } from "./messages.js";
import type { Tool } from "./tool.js";

/**
 * Everything that must be byte-identical between a parent request and a fork's request so that
 * the fork reads the parent's prefix from the prompt cache (R-F3). The prefix order of the
 * cache key is tools → system → messages; model and thinking config are part of the key too.
 * The main loop saves the latest value after every turn.
 */
export interface CacheSafeParams {
  readonly model: string;
  /** System blocks exactly as sent, cache_control included. */
  readonly systemPrompt: readonly TextBlockParam[];
  /** Tool definitions exactly as sent (API JSON form, stable order). */
  readonly tools: readonly Anthropic.Messages.ToolUnion[];
  readonly toolChoice?: Anthropic.Messages.ToolChoice;
  readonly thinking?: Anthropic.Messages.ThinkingConfigParam;
  readonly maxOutputTokens: number;
  /** The parent's history up to now; a fork appends its own messages after these. */
  readonly forkContextMessages: readonly Message[];
}

/** The request a CacheSafeParams describes, in the loop's own terms (what `buildRequest` takes). */
export interface CacheSafeRequest {
  readonly model: string;
  readonly systemPrompt: string | readonly TextBlockParam[];
  readonly tools: readonly Tool[];
  readonly thinking?: ThinkingConfigParam | undefined;
  readonly maxOutputTokens: number;
  readonly messages: readonly Message[];
}

/**
 * R-F3: the one way to build CacheSafeParams — from the request being sent, with the same
 * helpers `buildRequest` uses for its bytes (system blocks with their breakpoint, tool
 * definitions in their stable order). The loop's per-iteration value, the session's seed and a
 * batch's shared prefix all come from here, so none of them can drift from what the loop sends.
 */
export function buildCacheSafeParams(request: CacheSafeRequest): CacheSafeParams {
  return {
    model: request.model,
    systemPrompt: buildSystemBlocks(request.systemPrompt),
    tools: toolDefinitions(request.tools),
    ...(request.thinking === undefined ? {} : { thinking: request.thinking }),
    maxOutputTokens: request.maxOutputTokens,
    forkContextMessages: request.messages,
  };
}
