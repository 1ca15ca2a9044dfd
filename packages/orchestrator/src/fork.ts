import type { AgentPool } from "./agent-pool.js";
import { buildSubAgentTask, type SubAgentTaskSpec } from "./sub-agent-task.js";
import type { ParentCallbacks, SubAgentHandle } from "./sub-agent-types.js";

/** What a fork is: a sub-agent task spec (the parent's prefix, the fork's directive or messages, …). */
export type ForkOptions = SubAgentTaskSpec;

/**
 * `fork()`: runs a sub-agent in the pool whose request is the parent's exact prefix plus the
 * fork's own messages (R-F3), so the parent's conversation is a cache read.
 */
export function fork(pool: AgentPool, options: ForkOptions, hooks?: ParentCallbacks): SubAgentHandle {
  return pool.run(buildSubAgentTask(options), hooks);
}
