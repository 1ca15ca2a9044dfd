import type { PromptLayout, Section } from "./prompt-layout.js";

/** `diagnostics.cache_miss_reason` of the response (SDK 1.14 `CacheMissReason`, api doc §5). */
export type CacheMissReason =
  | {
      type: "model_changed" | "system_changed" | "tools_changed" | "messages_changed";
      cache_missed_input_tokens: number;
    }
  | { type: "previous_message_not_found" }
  | { type: "unavailable" };

export interface Diagnostics {
  cache_miss_reason: CacheMissReason | null;
}

interface Fingerprint {
  scope: string;
  modelId: string;
  systemConfig: string;
  messagesConfig: string;
  /**
   * Per section, the cumulative cache key and the tokens of each position. Keys, not canonical
   * text: they are already computed, and up to `limit` fingerprints are kept, so a long embedded
   * run would otherwise hold every prompt it saw in full. Once scope, model and the configs
   * mixed into the keys are known to be equal, two keys at a position are equal exactly when
   * everything up to that position is.
   */
  sections: Record<Section, { keys: string[]; tokens: number[] }>;
  totalTokens: number;
}

/**
 * Prompt-cache diagnostics: remembers each response's prompt fingerprint by message id and, when
 * a request names `diagnostics.previous_message_id`, says why its prefix could not be reused —
 * a debugging aid for fork and compaction requests that should share the parent's cache.
 */
export class CacheDiagnostics {
  readonly #byMessage = new Map<string, Fingerprint>();
  readonly #limit: number;

  constructor(limit = 10_000) {
    this.#limit = limit;
  }

  /** `keys`: the request's cumulative cache keys (CacheAccount.keys), one per layout position. */
  remember(
    messageId: string,
    scope: string,
    modelId: string,
    layout: PromptLayout,
    keys: readonly string[],
  ): void {
    this.#byMessage.set(messageId, fingerprint(scope, modelId, layout, keys));
    if (this.#byMessage.size > this.#limit) {
      const oldest = this.#byMessage.keys().next().value;
      if (oldest !== undefined) this.#byMessage.delete(oldest);
    }
  }

  /** Null `previousId` = opted in on a first turn: nothing to compare. */
  diagnose(
    previousId: string | null,
    scope: string,
    modelId: string,
    layout: PromptLayout,
    keys: readonly string[],
  ): Diagnostics {
    if (previousId === null) return { cache_miss_reason: null };
    const previous = this.#byMessage.get(previousId);
    if (!previous || previous.scope !== scope)
      return { cache_miss_reason: { type: "previous_message_not_found" } };
    const current = fingerprint(scope, modelId, layout, keys);
    const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
    const toolsTokens = sum(previous.sections.tools.tokens);
    if (previous.modelId !== current.modelId || previous.systemConfig !== current.systemConfig) {
      return missed("model_changed", previous.totalTokens);
    }
    if (!sameList(previous.sections.tools.keys, current.sections.tools.keys)) {
      return missed("tools_changed", previous.totalTokens);
    }
    if (!sameList(previous.sections.system.keys, current.sections.system.keys)) {
      return missed("system_changed", previous.totalTokens - toolsTokens);
    }
    // Same model, tools and system but other prompt parameters (thinking, tool_choice) differ.
    if (previous.messagesConfig !== current.messagesConfig)
      return { cache_miss_reason: { type: "unavailable" } };
    const before = previous.sections.messages;
    const common = commonPrefix(before.keys, current.sections.messages.keys);
    if (common < before.keys.length) {
      const lost = sum(before.tokens.slice(common));
      return missed("messages_changed", lost);
    }
    return { cache_miss_reason: null };
  }
}

function missed(
  type: "model_changed" | "system_changed" | "tools_changed" | "messages_changed",
  tokens: number,
): Diagnostics {
  return { cache_miss_reason: { type, cache_missed_input_tokens: tokens } };
}

function fingerprint(
  scope: string,
  modelId: string,
  layout: PromptLayout,
  keys: readonly string[],
): Fingerprint {
  const sections: Fingerprint["sections"] = {
    tools: { keys: [], tokens: [] },
    system: { keys: [], tokens: [] },
    messages: { keys: [], tokens: [] },
  };
  for (const [i, p] of layout.positions.entries()) {
    sections[p.section].keys.push(keys[i] ?? "");
    sections[p.section].tokens.push(p.tokens);
  }
  return {
    scope,
    modelId,
    systemConfig: layout.systemConfig,
    messagesConfig: layout.messagesConfig,
    sections,
    totalTokens: layout.totalTokens,
  };
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function commonPrefix(a: readonly string[], b: readonly string[]): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}
