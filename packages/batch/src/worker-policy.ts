import { permissionModeFacts } from "@forkloop/tools";
import type { QueuedBatch } from "./queue-store.js";

/**
 * What a worker's operator lets the batches on its queue do (R-B1, trust). A batch's settings
 * are whatever was written to Redis; the operator's choices are this host's, and a batch cannot
 * change them. Deny rules and the sandbox need no entry here: the worker applies its host's
 * settings on top of every batch's rules and its own `--sandbox`, whatever the batch says.
 */
export interface WorkerPolicy {
  /**
   * Run batches that ask for `bypassPermissions` (every tool call unasked). Off unless the
   * operator opts in, as Claude Code needs `--dangerously-skip-permissions` and the Agent SDK
   * `allowDangerouslySkipPermissions` (`forkloop worker --allow-dangerously-skip-permissions`).
   */
  readonly allowBypassPermissions: boolean;
  /** This host's settings say `permissions.disableBypassPermissionsMode: "disable"`: no opt-in lifts it. */
  readonly bypassDisabledBySettings?: boolean;
}

/** Refuses bypassPermissions: the default when a worker is given no policy. */
export const CAUTIOUS_POLICY: WorkerPolicy = { allowBypassPermissions: false };

/** Why this worker will not run the batch's items, or undefined when it will. */
export function batchRefusal(batch: QueuedBatch, policy: WorkerPolicy): string | undefined {
  if (!permissionModeFacts(batch.spec.permissionMode).dangerous) return undefined;
  const asks = "it asks for permission mode bypassPermissions (every tool call runs unasked)";
  if (policy.bypassDisabledBySettings === true) {
    return `${asks}, and this worker's settings disable that mode (permissions.disableBypassPermissionsMode)`;
  }
  if (!policy.allowBypassPermissions) {
    return `${asks}; this worker runs such batches only when started with --allow-dangerously-skip-permissions`;
  }
  return undefined;
}
