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
  sections: Record<Section, { canonicals: string[]; tokens: number[] }>;
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

  remember(messageId: string, scope: string, modelId: string, layout: PromptLayout): void {
    this.#byMessage.set(messageId, fingerprint(scope, modelId, layout));
    if (this.#byMessage.size > this.#limit) {
      const oldest = this.#byMessage.keys().next().value;
      if (oldest !== undefined) this.#byMessage.delete(oldest);
    }
  }

  /** Null `previousId` = opted in on a first turn: nothing to compare. */
  diagnose(previousId: string | null, scope: string, modelId: string, layout: PromptLayout): Diagnostics {
    if (previousId === null) return { cache_miss_reason: null };
    const previous = this.#byMessage.get(previousId);
    if (!previous || previous.scope !== scope)
      return { cache_miss_reason: { type: "previous_message_not_found" } };
    const current = fingerprint(scope, modelId, layout);
    const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
    const toolsTokens = sum(previous.sections.tools.tokens);
    if (previous.modelId !== current.modelId || previous.systemConfig !== current.systemConfig) {
      return missed("model_changed", previous.totalTokens);
    }
    if (!sameList(previous.sections.tools.canonicals, current.sections.tools.canonicals)) {
      return missed("tools_changed", previous.totalTokens);
    }
    if (!sameList(previous.sections.system.canonicals, current.sections.system.canonicals)) {
      return missed("system_changed", previous.totalTokens - toolsTokens);
    }
    // Same model, tools and system but other prompt parameters (thinking, tool_choice) differ.
    if (previous.messagesConfig !== current.messagesConfig)
      return { cache_miss_reason: { type: "unavailable" } };
    const before = previous.sections.messages;
    const now = current.sections.messages.canonicals;
    const common = commonPrefix(before.canonicals, now);
    if (common < before.canonicals.length) {
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

function fingerprint(scope: string, modelId: string, layout: PromptLayout): Fingerprint {
  const sections: Fingerprint["sections"] = {
    tools: { canonicals: [], tokens: [] },
    system: { canonicals: [], tokens: [] },
    messages: { canonicals: [], tokens: [] },
  };
  for (const p of layout.positions) {
    sections[p.section].canonicals.push(p.canonical);
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
