/**
 * `@forkloop/batch/testing`: fixtures for tests of batch backends, journals and applies, in the
 * test suites and in the racer processes the chaos tests spawn from the built packages; a real
 * Redis for the queue backend (R-B1) and hosts on a network for its multi-host tests. Not API.
 */
import type { ItemResult } from "../job-backend.js";

export {
  canMakeHosts,
  type NetworkHosts,
  type NetworkHostsOptions,
  startNetworkHosts,
} from "./network-hosts.js";
export { type RedisServer, type RedisServerOptions, startRedisServer } from "./redis-server.js";

/** A finished item's result: one turn, one request of one token each way, nothing spent. */
export function itemResult(text = "done"): ItemResult {
  return {
    turns: 1,
    usage: {
      inputTokens: 1,
      outputTokens: 1,
      cacheCreationInputTokens: 0,
      cacheReadInputTokens: 0,
      apiCalls: 1,
    },
    costUsd: 0,
    durationMs: 1,
    terminal: "completed",
    text,
  };
}
