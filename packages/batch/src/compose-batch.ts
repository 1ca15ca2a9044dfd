import { isAbsolute, resolve } from "node:path";
import { type ModelAliasEnv, resolveModelAlias } from "@forkloop/loop-core";
import { isInCheckout, type LoopChoices, type ProjectState } from "@forkloop/sdk";
import { BatchError } from "./batch-error.js";
import { BATCH_IDENTITY_FLAGS, QUEUED_SETTINGS_FLAGS, startSettingsOf } from "./batch-flag-roles.js";
import type { ItemSource } from "./batch-items.js";
import { type BatchPlan, planNewBatch, planResume } from "./batch-plan.js";
import { type BatchSpec, loadBatch } from "./batch-store.js";
import { resumableStartSettings, type StartSettings } from "./resume-settings.js";
import { outputSchemaProblem } from "./structured-output.js";

/**
 * The flags of `forkloop batch` that compose a batch, by the names batch.json keeps its start
 * settings under (R-R7): a resume lays the stored ones under its own and reads them as flags again.
 */
export interface BatchCompositionFlags {
  readonly files?: string | undefined;
  readonly items?: string | undefined;
  readonly prompt?: string | undefined;
  readonly id?: string | undefined;
  readonly resume?: string | undefined;
  readonly "retry-failed"?: boolean | undefined;
  readonly "retry-conflicts"?: boolean | undefined;
  readonly repair?: boolean | undefined;
  readonly "dry-run"?: boolean | undefined;
  readonly model?: string | undefined;
  readonly "max-turns"?: number | undefined;
  readonly "allowed-tools"?: BatchSpec["allowedTools"] | undefined;
  readonly "disallowed-tools"?: BatchSpec["disallowedTools"] | undefined;
  readonly "permission-mode"?: BatchSpec["permissionMode"] | undefined;
  readonly "fallback-model"?: readonly string[] | undefined;
  readonly "append-system-prompt"?: string | undefined;
  readonly "mcp-config"?: readonly string[] | undefined;
  readonly "strict-mcp-config"?: boolean | undefined;
  readonly output?: string | undefined;
  readonly rpm?: number | undefined;
  readonly "json-schema"?: string | undefined;
  readonly reduce?: string | undefined;
  readonly queue?: string | undefined;
  readonly api?: "messages" | "batches" | undefined;
  readonly attempts?: number | undefined;
  readonly "retry-delay"?: number | undefined;
  readonly "max-budget-usd"?: number | undefined;
  readonly report?: boolean | undefined;
  readonly isolate?: boolean | undefined;
  readonly "no-isolate"?: boolean | undefined;
}

/**
 * How the command reads flag values, which a composition needs again for the start settings a
 * resume lays over the stored ones: the same checks and the same files as the command's argv.
 */
export interface BatchFlagReader<F extends BatchCompositionFlags> {
  /** Flag values checked as the command checks its argv (a bad one throws, exit 2). */
  readonly check: (values: StartSettings) => F;
  /** `--json-schema FILE|JSON` read as a JSON object (an unreadable file or bad JSON throws). */
  readonly jsonSchema: (value: string, cwd: string) => Record<string, unknown>;
  /** `--mcp-config FILE|JSON` as batch.json keeps it (a file made absolute against `cwd`). */
  readonly mcpConfig: (value: string, cwd: string) => string;
  /** The flags of the loop choices (thinking, summary model, context editing). */
  readonly loopFlags: readonly string[];
}

/**
 * A composition's answer: the value, or why the options do not make a batch (code
 * `invalid_batch`, the message naming the problem and the fix; `data.usage` when the command's
 * usage belongs after it). A batch that cannot be read (unknown id, damaged batch.json) throws
 * as `loadBatch` does.
 */
export type BatchComposition<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: BatchError };

/** A batch to resume, as batch.json holds it. */
interface SavedBatch {
  readonly spec: BatchSpec;
  readonly dir: string;
}

/** What a local resume runs with: its batch, the flags laid over the stored ones, and what it does not reuse. */
export interface ResumableBatch<F> {
  readonly stored: SavedBatch;
  readonly flags: F;
  /** Stored settings a batch in the checkout is not resumed with (R-S11), for the caller to say. */
  readonly unused: readonly string[];
}

/**
 * R-R7: a local resume's flags — the start settings batch.json keeps, the resume's own over them,
 * checked as `forkloop batch` checks its argv. A batch from before `startFlags` has none: its
 * settings are only those of batch.json's other fields.
 */
export async function resumableBatch<F extends BatchCompositionFlags>(input: {
  readonly state: ProjectState;
  readonly flags: F;
  readonly given: StartSettings;
  readonly reader: BatchFlagReader<F>;
}): Promise<BatchComposition<ResumableBatch<F>>> {
  const { flags } = input;
  const id = flags.resume!;
  const identity = BATCH_IDENTITY_FLAGS.filter((flag) => flags[flag] !== undefined);
  if (identity.length > 0) {
    return refused(
      `--resume continues batch ${id}, whose items and prompt are fixed; drop ${identity.map((flag) => `--${flag}`).join(", ")} (start a new batch for other items).`,
    );
  }
  if (flags["dry-run"]) return refused(dryRunOnResume(id));
  const stored = await loadBatch(input.state, id);
  if (stored.spec.queue !== undefined) {
    // Its items are on Redis: a local resume would run them all again beside the workers.
    return refused(
      `batch ${stored.spec.id} runs on the queue ${stored.spec.queue}; re-attach with \`forkloop batch --resume ${stored.spec.id} --queue ${stored.spec.queue}\`.`,
    );
  }
  const { kept, unused } = resumableStartSettings(
    stored.spec.startFlags ?? {},
    input.given,
    isInCheckout(input.state, stored.dir),
  );
  return { ok: true, value: { stored, flags: input.reader.check({ ...kept, ...input.given }), unused } };
}

/**
 * Checks the flags and lists a new batch's items (a typo or a bad item costs nothing), or lays a
 * resume's given settings over its stored batch. `loop` (thinking, the summary model, context
 * editing: flags over settings) goes into a new batch's batch.json, so a resume and every queue
 * worker use the same.
 */
export async function composeBatch<F extends BatchCompositionFlags>(input: {
  readonly flags: F;
  readonly cwd: string;
  readonly state: ProjectState;
  readonly loop: LoopChoices;
  /** The flags as given. */
  readonly given: StartSettings;
  /** The batch a local resume continues (`resumableBatch`). */
  readonly stored?: SavedBatch | undefined;
  readonly reader: BatchFlagReader<F>;
  /** R-X2: the environment `--model` / `--fallback-model` aliases resolve in (`ANTHROPIC_DEFAULT_*_MODEL`). */
  readonly modelEnv?: ModelAliasEnv | undefined;
}): Promise<BatchComposition<BatchPlan>> {
  const { flags, cwd } = input;
  try {
    const misplaced = resumeOnlyFlag(flags);
    if (misplaced !== undefined) return refused(misplaced);
    if (input.stored !== undefined) return { ok: true, value: resumePlan(input.stored, input) };
    if ((flags.files === undefined) === (flags.items === undefined)) {
      return refused("give exactly one of --files GLOB or --items FILE.jsonl (or --resume ID).", {
        usage: true,
      });
    }
    if (flags.prompt === undefined) {
      return refused(`--prompt is required, e.g. --prompt "Summarize {{${flags.files ? "file" : "item"}}}".`);
    }
    const source: ItemSource =
      flags.files !== undefined
        ? { kind: "files", pattern: flags.files, cwd }
        : { kind: "items", path: isAbsolute(flags.items!) ? flags.items! : resolve(cwd, flags.items!) };
    const plan = await planNewBatch({
      id: flags.id,
      cwd,
      source,
      prompt: flags.prompt,
      state: input.state,
      settings: settingsFromFlags(flags, cwd, input.reader, input.modelEnv),
      loop: input.loop as NonNullable<BatchSpec["loop"]>,
      startFlags: startSettingsOf(input.given),
    });
    return { ok: true, value: plan };
  } catch (error) {
    if (error instanceof OutputSchemaRefusal) return { ok: false, error: error.refusal };
    throw error;
  }
}

/** `--retry-failed`, `--retry-conflicts` and `--repair` act on a batch that exists. */
function resumeOnlyFlag(flags: BatchCompositionFlags): string | undefined {
  if (flags.resume !== undefined) return undefined;
  if (flags["retry-failed"])
    return "--retry-failed only applies to --resume ID (it re-runs that batch's failed items).";
  if (flags["retry-conflicts"])
    return "--retry-conflicts only applies to --resume ID (it re-runs that batch's conflicted items on the tree as it is now).";
  if (flags.repair) return "--repair only applies to --resume ID (it repairs that batch's journal).";
  return undefined;
}

/**
 * The batch.json fields the given flags set — only those given, so a new batch lays them over the
 * defaults and a resume over what it stored. `startFlags` keeps every start setting as given.
 */
function settingsFromFlags<F extends BatchCompositionFlags>(
  flags: F,
  cwd: string,
  reader: BatchFlagReader<F>,
  modelEnv: ModelAliasEnv = {},
): Partial<BatchSpec> {
  const alias = (model: string) => resolveModelAlias(model, modelEnv);
  return definedOnly({
    model: flags.model === undefined ? undefined : alias(flags.model),
    maxTurns: flags["max-turns"],
    allowedTools: flags["allowed-tools"],
    disallowedTools: flags["disallowed-tools"],
    permissionMode: flags["permission-mode"],
    fallbackModels: flags["fallback-model"]?.map(alias),
    appendSystemPrompt: flags["append-system-prompt"],
    mcpConfig: flags["mcp-config"]?.map((value) => reader.mcpConfig(value, cwd)),
    strictMcpConfig: flags["strict-mcp-config"],
    // --output on a resume moves the report (e.g. the first directory turned out unwritable).
    outputDir: flags.output === undefined ? undefined : resolve(cwd, flags.output),
    rpm: flags.rpm,
    outputSchema:
      flags["json-schema"] === undefined
        ? undefined
        : outputSchemaFlag(reader.jsonSchema(flags["json-schema"], cwd)),
    reduce: flags.reduce,
  });
}

/** Carries a refused `--json-schema` out of the settings to the composition's answer. */
class OutputSchemaRefusal extends Error {
  constructor(readonly refusal: BatchError) {
    super(refusal.message);
  }
}

/**
 * R-B6: `--json-schema`, compiled before anything runs: a schema that does not compile, or that
 * a request cannot carry, is refused naming the fix.
 */
function outputSchemaFlag(schema: Record<string, unknown>): Record<string, unknown> {
  const problem = outputSchemaProblem(schema);
  if (problem !== undefined)
    throw new OutputSchemaRefusal(
      refusal(
        `--json-schema: ${problem}; give a JSON Schema whose type is "object", e.g. --json-schema '{"type":"object","properties":{"summary":{"type":"string"}},"required":["summary"]}'.`,
      ),
    );
  return schema;
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
function resumePlan<F extends BatchCompositionFlags>(
  stored: SavedBatch,
  input: {
    readonly given: StartSettings;
    readonly cwd: string;
    readonly loop: LoopChoices;
    readonly reader: BatchFlagReader<F>;
    readonly modelEnv?: ModelAliasEnv | undefined;
  },
): BatchPlan {
  const settings = startSettingsOf(input.given);
  const loopGiven = input.reader.loopFlags.some((flag) => flag in settings);
  return planResume(stored, {
    settings: settingsFromFlags(input.reader.check(settings), input.cwd, input.reader, input.modelEnv),
    ...(loopGiven ? { loop: input.loop as BatchSpec["loop"] } : {}),
    startFlags: settings,
  });
}

/**
 * R-B1: what only a local batch, or only a `--queue` batch, can do, refused naming the way that
 * works (undefined when the flags go together). Checked before Redis is contacted.
 */
export function batchModeRefusal(flags: BatchCompositionFlags): BatchError | undefined {
  const message = flags.queue === undefined ? localOnlyRefusal(flags) : queueRefusal(flags);
  return message === undefined ? undefined : refusal(message);
}

function localOnlyRefusal(flags: BatchCompositionFlags): string | undefined {
  if (flags.attempts !== undefined || flags["retry-delay"] !== undefined)
    return "--attempts and --retry-delay apply to --queue batches; a local batch retries with --resume ID --retry-failed.";
  return undefined;
}

function queueRefusal(flags: BatchCompositionFlags): string | undefined {
  if (flags.api === "batches")
    return "--api batches needs a local batch: its rounds are formed and polled by this process, while with --queue the workers send each request. Drop --queue, or drop --api batches.";
  if (flags["max-budget-usd"] !== undefined)
    return "--max-budget-usd needs a local batch: with --queue the workers start the items, and this process cannot hold them back. Drop --queue to cap the spend, or drop --max-budget-usd.";
  if (flags.report)
    return "--report needs a local batch: the HTML report reads the batch's journal and transcripts, which a queued batch keeps in Redis and on its workers' hosts. Drop --report (results.jsonl, report.json and report.md are still written).";
  if (flags.isolate && flags["no-isolate"])
    return "give one of --isolate and --no-isolate (with --queue, items are isolated only with --isolate).";
  if (flags.resume !== undefined && (flags.isolate || flags["no-isolate"]))
    return `--resume ${flags.resume} keeps the isolation the batch started with; drop ${flags.isolate ? "--isolate" : "--no-isolate"}.`;
  return undefined;
}

/**
 * A `--queue` batch's re-attach keeps the settings stored in Redis: a setting flag, or a dry run,
 * is refused (undefined when none is given).
 */
export function queueReattachRefusal(
  id: string,
  flags: Readonly<Partial<Record<(typeof QUEUED_SETTINGS_FLAGS)[number] | "dry-run", unknown>>>,
): BatchError | undefined {
  const conflicting = QUEUED_SETTINGS_FLAGS.filter((flag) => flags[flag] !== undefined);
  if (conflicting.length > 0) {
    return refusal(
      `--resume continues batch ${id} with the settings it started with; drop ${conflicting.map((flag) => `--${flag}`).join(", ")}.`,
    );
  }
  if (flags["dry-run"]) return refusal(dryRunOnResume(id));
  return undefined;
}

/**
 * R-B1: with --queue the items run in `forkloop worker` processes, so the flags only a local batch
 * or a worker takes are refused, and a re-attach keeps the `--rpm` stored with the batch.
 */
export function queuedRunRefusal(
  flags: Readonly<Partial<Record<"concurrency" | "no-warm" | "retry-failed" | "repair" | "rpm", unknown>>>,
  attachTo: string | undefined,
): BatchError | undefined {
  const misplaced = (["concurrency", "no-warm", "retry-failed", "repair"] as const).filter(
    (flag) => flags[flag] !== undefined,
  );
  if (misplaced.length > 0) {
    return refusal(
      `with --queue the items run in \`forkloop worker\` processes: drop ${misplaced.map((flag) => `--${flag}`).join(", ")} (give a worker --concurrency N instead).`,
    );
  }
  if (attachTo !== undefined && flags.rpm !== undefined) {
    return refusal(
      `--rpm is kept with the batch when it is enqueued; drop it to re-attach with --resume ${attachTo}.`,
    );
  }
  return undefined;
}

/** The answer of a composition the options refuse. */
function refused(
  message: string,
  data?: { readonly usage: true },
): { readonly ok: false; readonly error: BatchError } {
  return { ok: false, error: refusal(message, data) };
}

function refusal(message: string, data?: { readonly usage: true }): BatchError {
  return new BatchError("invalid_batch", message, data);
}

function dryRunOnResume(id: string): string {
  return `--dry-run lists a new batch's items; \`forkloop batch status ${id}\` shows this one's progress.`;
}
