import { resolveModelAlias } from "@forkloop/loop-core";
import { BatchError } from "./batch-error.js";
import type { ItemSource } from "./batch-items.js";
import { describeIssues } from "./batch-setting-checks.js";
import { type BatchSpec, batchSpecSchema } from "./batch-store.js";
import type { StartSettings } from "./resume-settings.js";

/**
 * R-X2: a batch's model when none is given. Not `forkloop run`'s (Claude Code's newest Opus): a
 * batch runs many items billed together, so it keeps the cheaper Sonnet 4.6 and loop-core's
 * 8,000-token output cap without default thinking; --model and the settings choose otherwise.
 */
export const BATCH_DEFAULT_MODEL = "claude-sonnet-4-6";

/**
 * A new batch's batch.json: the defaults (the model above, 8 turns, no tool rules, `dontAsk`,
 * no fallbacks, the report in the batch's own directory) under the `settings` given, checked.
 */
export function newBatchSpec(input: {
  readonly id: string;
  readonly cwd: string;
  readonly source: ItemSource;
  readonly prompt: string;
  /** The batch's own directory: the report's default place. */
  readonly dir: string;
  /** The batch.json fields the flags set. */
  readonly settings: Partial<BatchSpec>;
  /** Thinking, the summary model, context editing (flags over settings); kept for every resume. */
  readonly loop: NonNullable<BatchSpec["loop"]>;
  /** R-R7: every start setting as given, for every resume. */
  readonly startFlags: StartSettings;
}): BatchSpec {
  const { source } = input;
  return checkBatchSpec({
    id: input.id,
    createdAt: new Date().toISOString(),
    cwd: input.cwd,
    source:
      source.kind === "files"
        ? { kind: "files", pattern: source.pattern }
        : { kind: "items", path: source.path },
    prompt: input.prompt,
    model: resolveModelAlias(BATCH_DEFAULT_MODEL),
    maxTurns: 8,
    allowedTools: [],
    disallowedTools: [],
    permissionMode: "dontAsk",
    fallbackModels: [],
    outputDir: input.dir,
    ...input.settings,
    ...(Object.keys(input.loop).length === 0 ? {} : { loop: input.loop }),
    startFlags: input.startFlags,
  });
}

/**
 * A batch's settings held to the checks every resume and every `forkloop worker` applies to
 * stored settings (R-B1, trust), so a batch started or respecified here is one they can read: a
 * model id with a space, say, is refused now (`invalid_batch`).
 */
export function checkBatchSpec(spec: BatchSpec): BatchSpec {
  const checked = batchSpecSchema.safeParse(spec);
  if (!checked.success)
    throw new BatchError(
      "invalid_batch",
      `the batch's settings are not valid: ${describeIssues(checked.error)}.`,
    );
  return spec;
}
