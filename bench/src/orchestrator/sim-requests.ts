import type { RequestRecord, Simulator } from "@forkloop/sim";
import { costWeightedInputTokens } from "../cost-weighted-tokens.js";

/** The simulator's records of `POST /v1/messages` (count_tokens and control calls left out). */
export function messageRequests(sim: Simulator): RequestRecord[] {
  return sim.requests().filter((record) => record.path === "/v1/messages");
}

/** Cost-weighted input tokens summed over requests (a refused request has no usage: 0). */
export function weighted(records: readonly RequestRecord[]): number {
  return records.reduce((sum, record) => sum + (record.usage ? costWeightedInputTokens(record.usage) : 0), 0);
}

/** Polls every 5 ms until `condition` holds; throws naming `what` after `timeoutMs`. */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
