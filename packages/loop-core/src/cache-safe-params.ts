import type Anthropic from "@anthropic-ai/sdk";
import {
  buildSystemBlocks,
  type ThinkingConfigParam,
  type ToolUnion,
  toolDefinitions,
} from "./build-request.js";
import type { Message, TextBlockParam } from "./messages.js";
import type { EffortLevel } from "./model-table.js";
import type { Tool } from "./tool.js";

/**
 * The cache-key part of a request (R-F3): everything but the messages that must be byte-identical
 * between a parent request and a fork's request so that the fork reads the parent's prefix from
 * the prompt cache. The prefix order of the cache key is tools → system → messages; model and
 * thinking config are part of the key too.
 */
export interface RequestPrefix {
  readonly model: string;
  /** System blocks exactly as sent, cache_control included. */
  readonly systemPrompt: readonly TextBlockParam[];
  /** Tool definitions exactly as sent (API JSON form, stable order). */
  readonly tools: readonly ToolUnion[];
  readonly toolChoice?: Anthropic.Messages.ToolChoice;
  readonly thinking?: Anthropic.Messages.ThinkingConfigParam;
  /** `output_config.effort`: a top-level effort change invalidates the messages cache (R-D3, R-X2). */
  readonly effort?: EffortLevel;
  readonly maxOutputTokens: number;
}

/**
 * A request prefix with the history a fork continues from. The loop announces the one of each
 * request it sends on `request_start` (its messages are the request's); a session keeps the last
 * one it saw and its forks start from it.
 */
export interface CacheSafeParams extends RequestPrefix {
  /** The parent's history up to now; a fork appends its own messages after these. */
  readonly forkContextMessages: readonly Message[];
}

/** The request a CacheSafeParams describes, in the loop's own terms (what `buildRequest` takes). */
export interface CacheSafeRequest {
  readonly model: string;
  readonly systemPrompt: string | readonly TextBlockParam[];
  readonly tools: readonly Tool[];
  /**
   * R-F3: definitions already sent for `tools` (a fork's parent's, as it sent them): kept as they
   * are instead of being built again, so a fork's tools prefix is its parent's bytes.
   */
  readonly toolDefinitions?: readonly ToolUnion[] | undefined;
  readonly thinking?: ThinkingConfigParam | undefined;
  readonly effort?: EffortLevel | undefined;
  readonly maxOutputTokens: number;
  readonly messages: readonly Message[];
}

/**
 * R-F3: the one way to build CacheSafeParams from tools and a system prompt — with the same
 * helpers a request's bytes come from (system blocks with their breakpoint, tool definitions in
 * their stable order). The loop builds each iteration's prefix here and sends those very bytes;
 * a batch's shared prefix (a root with no request before it) comes from here too.
 */
export function buildCacheSafeParams(request: CacheSafeRequest): CacheSafeParams {
  return {
    model: request.model,
    systemPrompt: buildSystemBlocks(request.systemPrompt),
    tools: request.toolDefinitions ?? toolDefinitions(request.tools),
    ...(request.thinking === undefined ? {} : { thinking: request.thinking }),
    ...(request.effort === undefined ? {} : { effort: request.effort }),
    maxOutputTokens: request.maxOutputTokens,
    forkContextMessages: request.messages,
  };
}
