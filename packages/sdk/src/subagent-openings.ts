import type { LoopHooks } from "@forkloop/loop-core";

/**
 * A sub-agent's first message is yielded after its SubagentStart hooks, as the Agent SDK yields
 * it. Those hooks (the settings' and the program's callbacks) run in the sub-agent's runner, in
 * order, before its first request: `marked` adds a last one that marks the sub-agent opened, and
 * `opened` resolves then — at once when no SubagentStart hook is set.
 */
export class SubagentOpenings {
  readonly #opened = new Map<string, { promise: Promise<void>; resolve: () => void }>();
  #hooked = false;

  marked(hooks: LoopHooks): LoopHooks {
    if ((hooks.subagentStart?.length ?? 0) === 0) return hooks;
    this.#hooked = true;
    const mark: NonNullable<LoopHooks["subagentStart"]>[number] = async ({ context }) => {
      this.#entry(context.agentId).resolve();
      return {};
    };
    return { ...hooks, subagentStart: [...(hooks.subagentStart ?? []), mark] };
  }

  opened(agentId: string): Promise<void> {
    return this.#hooked ? this.#entry(agentId).promise : Promise.resolve();
  }

  #entry(agentId: string): { promise: Promise<void>; resolve: () => void } {
    let entry = this.#opened.get(agentId);
    if (entry === undefined) {
      let resolve!: () => void;
      const promise = new Promise<void>((done) => {
        resolve = done;
      });
      entry = { promise, resolve };
      this.#opened.set(agentId, entry);
    }
    return entry;
  }
}
