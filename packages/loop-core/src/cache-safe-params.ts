import type Anthropic from "@anthropic-ai/sdk";
import type { Message, TextBlockParam } from "./messages.js";

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
