import { isAbsolute, resolve } from "node:path";
import {
  type BatchPlan,
  type BatchSpec,
  type ItemSource,
  loadBatch,
  planNewBatch,
  planResume,
  resumableStartSettings,
  structuredOutputCheck,
} from "@forkloop/batch";
import { apiOutputSchema, resolveModelAlias } from "@forkloop/loop-core";
import { isInCheckout, type LoopChoices, type ProjectState } from "@forkloop/sdk";
import { jsonSchemaFlag } from "./claude-flag-values.js";
import { CliError } from "./cli-error.js";
import {
  BATCH_IDENTITY_FLAGS,
  BATCH_USAGE,
  type BatchFlags,
  checkBatchFlagValues,
  SETTINGS_FLAGS,
  startSettingsOf,
} from "./commands/batch-flags.js";
import type { GivenFlags } from "./flags.js";
import { LOOP_FLAG_OPTIONS } from "./loop-flags.js";
import { mcpConfigFlag } from "./mcp-config-args.js";

/** A batch to resume, as batch.json holds it. */
export interface StoredBatch {
  readonly spec: BatchSpec;
  readonly dir: string;
}

/**
 * R-R7: a local resume's flags — the start settings batch.json keeps, the resume's own over them,
 * checked as `forkloop batch` checks its argv. A batch from before `startFlags` has none: its
 * settings are only those of batch.json's other fields. `unused`: stored settings a batch in the
 * checkout is not resumed with (R-S11), for the caller to say.
 */
export async function loadResumable(
  state: ProjectState,
  flags: BatchFlags,
  given: GivenFlags,
): Promise<{ stored: StoredBatch; flags: BatchFlags; unused: readonly string[] }> {
  const id = flags.resume!;
  const identity = BATCH_IDENTITY_FLAGS.filter((flag) => flags[flag] !== undefined);
  if (identity.length > 0) {
    throw new CliError(
      `--resume continues batch ${id}, whose items and prompt are fixed; drop ${identity.map((flag) => `--${flag}`).join(", ")} (start a new batch for other items).`,
    );
  }
  if (flags["dry-run"]) {
    throw new CliError(
      `--dry-run lists a new batch's items; \`forkloop batch status ${id}\` shows this one's progress.`,
    );
  }
  const stored = await loadBatch(state, id);
  if (stored.spec.queue !== undefined) {
    // Its items are on Redis: a local resume would run them all again beside the workers.
    throw new CliError(
      `batch ${stored.spec.id} runs on the queue ${stored.spec.queue}; re-attach with \`forkloop batch --resume ${stored.spec.id} --queue ${stored.spec.queue}\`.`,
    );
  }
  const { kept, unused } = resumableStartSettings(
    stored.spec.startFlags ?? {},
    given,
    isInCheckout(state, stored.dir),
  );
  return { stored, flags: checkBatchFlagValues({ ...kept, ...given }), unused };
}

/**
 * Validates the flags and lists a new batch's items (a typo or a bad item costs nothing). `loop`
 * (thinking, the summary model, context editing: flags over settings) goes into a new batch's
 * batch.json, so a resume and every queue worker use the same.
 */
export async function planBatch(
  flags: BatchFlags,
  cwd: string,
  state: ProjectState,
  loop: LoopChoices,
  /** The flags as given, and the batch a resume continues. */
  invocation: { readonly given: GivenFlags; readonly stored?: StoredBatch },
): Promise<BatchPlan> {
  if (flags["retry-failed"] && flags.resume === undefined) {
    throw new CliError("--retry-failed only applies to --resume ID (it re-runs that batch's failed items).");
  }
  if (flags["retry-conflicts"] && flags.resume === undefined) {
    throw new CliError(
      "--retry-conflicts only applies to --resume ID (it re-runs that batch's conflicted items on the tree as it is now).",
    );
  }
  if (flags.repair && flags.resume === undefined) {
    throw new CliError("--repair only applies to --resume ID (it repairs that batch's journal).");
  }
  if (invocation.stored !== undefined) return resumePlan(invocation.stored, invocation.given, cwd, loop);
  if ((flags.files === undefined) === (flags.items === undefined)) {
    throw new CliError(
      `give exactly one of --files GLOB or --items FILE.jsonl (or --resume ID).\n\n${BATCH_USAGE}`,
    );
  }
  if (flags.prompt === undefined) {
    throw new CliError(
      `--prompt is required, e.g. --prompt "Summarize {{${flags.files ? "file" : "item"}}}".`,
    );
  }
  const source: ItemSource =
    flags.files !== undefined
      ? { kind: "files", pattern: flags.files, cwd }
      : { kind: "items", path: isAbsolute(flags.items!) ? flags.items! : resolve(cwd, flags.items!) };
  return planNewBatch({
    id: flags.id,
    cwd,
    source,
    prompt: flags.prompt,
    state,
    settings: settingsFromFlags(flags, cwd),
    loop: loop as NonNullable<BatchSpec["loop"]>,
    startFlags: startSettingsOf(invocation.given),
  });
}

/**
 * The batch.json fields the given flags set — only those given, so a new batch lays them over the
 * defaults and a resume over what it stored. `startFlags` keeps every start setting as given.
 */
function settingsFromFlags(flags: BatchFlags, cwd: string): Partial<BatchSpec> {
  return definedOnly({
    model: flags.model === undefined ? undefined : resolveModelAlias(flags.model),
    maxTurns: flags["max-turns"],
    allowedTools: flags["allowed-tools"],
    disallowedTools: flags["disallowed-tools"],
    permissionMode: flags["permission-mode"],
    fallbackModels: flags["fallback-model"]?.map(resolveModelAlias),
    appendSystemPrompt: flags["append-system-prompt"],
    mcpConfig: flags["mcp-config"]?.map((value) => mcpConfigFlag(value, cwd)),
    strictMcpConfig: flags["strict-mcp-config"],
    // --output on a resume moves the report (e.g. the first directory turned out unwritable).
    outputDir: flags.output === undefined ? undefined : resolve(cwd, flags.output),
    rpm: flags.rpm,
    outputSchema:
      flags["json-schema"] === undefined ? undefined : outputSchemaFlag(flags["json-schema"], cwd),
    reduce: flags.reduce,
  });
}

/**
 * R-B6: `--json-schema FILE|JSON`, read and compiled before anything runs: a file that cannot be
 * read, text that is not JSON, or a schema that does not compile is exit 2 naming the fix.
 */
function outputSchemaFlag(value: string, cwd: string): Record<string, unknown> {
  const schema = jsonSchemaFlag(value, cwd);
  const compiled = structuredOutputCheck(schema);
  const sendable = compiled.ok ? sendableOutputSchema(schema) : undefined;
  if (!compiled.ok || sendable !== undefined)
    throw new CliError(
      `--json-schema: ${compiled.ok ? sendable : compiled.error}; give a JSON Schema whose type is "object", e.g. --json-schema '{"type":"object","properties":{"summary":{"type":"string"}},"required":["summary"]}'.`,
    );
  return schema;
}

/** Why the schema cannot go in a request (apiOutputSchema refuses it), or undefined when it can. */
function sendableOutputSchema(schema: Record<string, unknown>): string | undefined {
  try {
    apiOutputSchema(schema);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

function definedOnly<T extends object>(value: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}

/**
 * R-R7: a resume's given start settings as batch.json fields (`planResume` lays them over the
 * stored ones). Thinking, the summary model and context editing are resolved again (flags over
 * settings) only when one of their flags is given.
 */
function resumePlan(stored: StoredBatch, given: GivenFlags, cwd: string, loop: LoopChoices): BatchPlan {
  const settings = startSettingsOf(given);
  const loopGiven = Object.keys(LOOP_FLAG_OPTIONS).some((flag) => flag in settings);
  return planResume(stored, {
    settings: settingsFromFlags(checkBatchFlagValues(settings), cwd),
    ...(loopGiven ? { loop: loop as BatchSpec["loop"] } : {}),
    startFlags: settings,
  });
}

/** A `--queue` batch's re-attach keeps the settings stored in Redis. */
export function checkResumeFlags(id: string, flags: BatchFlags): void {
  const conflicting = SETTINGS_FLAGS.filter((flag) => flags[flag] !== undefined);
  if (conflicting.length > 0) {
    throw new CliError(
      `--resume continues batch ${id} with the settings it started with; drop ${conflicting.map((flag) => `--${flag}`).join(", ")}.`,
    );
  }
  if (flags["dry-run"]) {
    throw new CliError(
      `--dry-run lists a new batch's items; \`forkloop batch status ${id}\` shows this one's progress.`,
    );
  }
}
