/**
 * Remembers, per tool_use id the simulator issued, the signatures of the thinking blocks that
 * preceded it in the same response, so a request that drops or reorders them in the latest
 * assistant turn is rejected like the API does (api doc §8: unmodified and in order).
 */
export class IssuedThinking {
  readonly #byToolUse = new Map<string, readonly string[]>();
  readonly #limit: number;

  constructor(limit = 10_000) {
    this.#limit = limit;
  }

  remember(toolUseIds: readonly string[], signatures: readonly string[]): void {
    if (signatures.length === 0) return;
    for (const id of toolUseIds) {
      this.#byToolUse.set(id, signatures);
      // Map iteration is insertion order: the first key is the oldest.
      if (this.#byToolUse.size > this.#limit) {
        const oldest = this.#byToolUse.keys().next().value;
        if (oldest !== undefined) this.#byToolUse.delete(oldest);
      }
    }
  }

  /** The signatures issued with this tool_use id, if the simulator issued it with thinking. */
  lookup(toolUseId: string): readonly string[] | undefined {
    return this.#byToolUse.get(toolUseId);
  }
}
