import type { RequestPrefix } from "@forkloop/loop-core";
import type { SubAgentTask } from "./sub-agent-types.js";

/**
 * R-R13: the cache-key part of a sub-agent's own requests — its parent's prefix as the fork
 * sent it (model, system, tools, thinking) with the fork's `max_tokens` — recorded in its
 * transcript, so a resume can continue it as a cache-safe fork of its own prefix.
 */
export function subAgentPrefix(task: SubAgentTask): RequestPrefix {
  const { forkContextMessages: _messages, ...prefix } = task.cacheSafeParams;
  return { ...prefix, maxOutputTokens: task.profile.limits.maxOutputTokens ?? prefix.maxOutputTokens };
}
