import type { StartSettings } from "./resume-settings.js";

/**
 * R-R7: the flags of `forkloop batch` about this invocation, not the batch — where to find it,
 * what to do now, how to print. Every other flag that is not in BATCH_IDENTITY_FLAGS is a start
 * setting: stored in batch.json as given and used by every resume, so a flag added later is kept
 * by construction.
 */
const INVOCATION_FLAGS = [
  "help",
  "resume",
  "retry-failed",
  "retry-conflicts",
  "repair",
  "dry-run",
  "cwd",
  "state-dir",
  "output-format",
  "queue",
] as const;

/** What a batch is — its items and its name: fixed once it exists, refused with --resume. */
export const BATCH_IDENTITY_FLAGS = ["files", "items", "prompt", "id"] as const;

/** The flags a `--queue` batch keeps in Redis: its re-attach refuses them. */
export const QUEUED_SETTINGS_FLAGS = [
  ...BATCH_IDENTITY_FLAGS,
  "model",
  "fallback-model",
  "max-turns",
  "allowed-tools",
  "disallowed-tools",
  "permission-mode",
  "append-system-prompt",
  "mcp-config",
  "strict-mcp-config",
  "thinking",
  "max-thinking-tokens",
  "summary-model",
  "context-editing",
  // R-B6: every worker checks the items' answers against the schema enqueued with the batch.
  "json-schema",
  // R-B7: the producer that sees every item settled runs the reduce enqueued with the batch.
  "reduce",
] as const;

/** The start settings among the given flags (R-R7). */
export function startSettingsOf(given: StartSettings): StartSettings {
  const notSettings = new Set<string>([...INVOCATION_FLAGS, ...BATCH_IDENTITY_FLAGS]);
  return Object.fromEntries(Object.entries(given).filter(([flag]) => !notSettings.has(flag)));
}
