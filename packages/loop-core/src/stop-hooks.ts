import type { LoopHooks, StopHookInput, StopHookOutcome } from "./hooks.js";

type StopHook = NonNullable<LoopHooks["stop"]>[number];

export interface StopHooksResult {
  readonly preventContinuation: boolean;
  readonly stopReason: string | undefined;
  readonly blockingErrors: readonly string[];
  /** Indexes of the hooks that blocked (not re-run on the retry they cause, R-L15). */
  readonly blockingHooks: readonly number[];
}

/**
 * R-L15: run the Stop hooks when the model ends without tool calls. A throwing hook counts as
 * "no opinion" (hooks.ts contract).
 */
export async function runStopHooks(
  hooks: readonly StopHook[],
  input: StopHookInput & { readonly skip: readonly number[] },
): Promise<StopHooksResult> {
  const { skip, ...hookInput } = input;
  const blockingErrors: string[] = [];
  const blockingHooks: number[] = [];
  let stopReason: string | undefined;
  let preventContinuation = false;
  for (const [index, hook] of hooks.entries()) {
    if (skip.includes(index)) continue;
    let outcome: StopHookOutcome;
    try {
      outcome = await hook(hookInput);
    } catch {
      continue;
    }
    if (outcome.preventContinuation) {
      preventContinuation = true;
      stopReason ??= outcome.stopReason;
    }
    if (outcome.blockingErrors && outcome.blockingErrors.length > 0) {
      blockingErrors.push(...outcome.blockingErrors);
      blockingHooks.push(index);
    }
  }
  return { preventContinuation, stopReason, blockingErrors, blockingHooks };
}
