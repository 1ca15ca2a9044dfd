import { isAbsolute, resolve } from "node:path";
import {
  type BatchSpec,
  batchDir,
  batchSpecSchema,
  createBatch,
  describeIssues,
  type ItemSource,
  type JobItem,
  type LoadedItems,
  loadBatch,
  loadItems,
  newBatchId,
  saveBatchSpec,
} from "@forkloop/batch";
import { resolveModelAlias } from "@forkloop/loop-core";
import { batchesDir, DEFAULT_MODEL, type LoopChoices, type ProjectState } from "@forkloop/sdk";
import { CliError } from "./cli-error.js";
import { BATCH_USAGE, type BatchFlags, SETTINGS_FLAGS } from "./commands/batch-flags.js";
import { mcpConfigFlag } from "./mcp-config-args.js";
import { checkWritableDir } from "./state-checks.js";

/** What the flags ask for, decided before anything is written: a new batch (items listed) or a resume. */
export type BatchPlan =
  | { readonly kind: "new"; readonly spec: BatchSpec; readonly loaded: LoadedItems }
  /** `respecified`: the resume's flags changed batch.json (`--output`, `--rpm`); it is saved. */
  | {
      readonly kind: "resume";
      readonly spec: BatchSpec;
      readonly dir: string;
      readonly respecified: boolean;
    };

/**
 * Validates the flags and lists a new batch's items (a typo or a bad item costs nothing). `loop`
 * (thinking, the summary model, context editing: flags over settings) goes into a new batch's
 * batch.json, so a resume and every queue worker use the same (issue 12 item 5).
 */
export async function planBatch(
  flags: BatchFlags,
  cwd: string,
  state: ProjectState,
  loop: LoopChoices,
): Promise<BatchPlan> {
  if (flags["retry-failed"] && flags.resume === undefined) {
    throw new CliError("--retry-failed only applies to --resume ID (it re-runs that batch's failed items).");
  }
  if (flags.repair && flags.resume === undefined) {
    throw new CliError("--repair only applies to --resume ID (it repairs that batch's journal).");
  }
  if (flags.resume !== undefined) {
    checkResumeFlags(flags.resume, flags);
    const { spec, dir } = await loadBatch(state, flags.resume);
    if (spec.queue !== undefined) {
      // Its items are on Redis: a local resume would run them all again beside the workers.
      throw new CliError(
        `batch ${spec.id} runs on the queue ${spec.queue}; re-attach with \`forkloop batch --resume ${spec.id} --queue ${spec.queue}\`.`,
      );
    }
    return {
      kind: "resume",
      spec: {
        ...spec,
        // --output on a resume moves the report (e.g. the first directory turned out unwritable).
        ...(flags.output === undefined ? {} : { outputDir: resolve(cwd, flags.output) }),
        // Issue 16 item 4: a resume's --rpm wins over the stored one, and is stored.
        ...(flags.rpm === undefined ? {} : { rpm: flags.rpm }),
      },
      dir,
      respecified: flags.output !== undefined || (flags.rpm !== undefined && flags.rpm !== spec.rpm),
    };
  }
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
  const loaded = await loadItems(source, flags.prompt);
  const id = flags.id ?? newBatchId();
  const spec: BatchSpec = {
    id,
    createdAt: new Date().toISOString(),
    cwd,
    source:
      source.kind === "files"
        ? { kind: "files", pattern: source.pattern }
        : { kind: "items", path: source.path },
    prompt: flags.prompt,
    model: resolveModelAlias(flags.model ?? DEFAULT_MODEL),
    maxTurns: flags["max-turns"] ?? 8,
    allowedTools: flags["allowed-tools"] ?? [],
    disallowedTools: flags["disallowed-tools"] ?? [],
    permissionMode: flags["permission-mode"] ?? "dontAsk",
    fallbackModels: (flags["fallback-model"] ?? []).map(resolveModelAlias),
    ...(flags["append-system-prompt"] === undefined
      ? {}
      : { appendSystemPrompt: flags["append-system-prompt"] }),
    ...(flags["mcp-config"] === undefined
      ? {}
      : {
          mcpConfig: flags["mcp-config"].map((value) => mcpConfigFlag(value, cwd)),
        }),
    ...(flags["strict-mcp-config"] === undefined ? {} : { strictMcpConfig: flags["strict-mcp-config"] }),
    outputDir: flags.output ? resolve(cwd, flags.output) : batchDir(state, id),
    ...(flags.rpm === undefined ? {} : { rpm: flags.rpm }),
    ...(Object.keys(loop).length === 0 ? {} : { loop: loop as BatchSpec["loop"] }),
  };
  // Held to the checks every resume and every `forkloop worker` applies to stored settings
  // (issue 16, trust), so a batch started here is one they can read: a model id with a space, say.
  const checked = batchSpecSchema.safeParse(spec);
  if (!checked.success)
    throw new CliError(`the batch's settings are not valid: ${describeIssues(checked.error)}.`);
  return { kind: "new", spec, loaded };
}

/** A resume keeps the settings the batch started with (batch.json, or Redis for a queued batch). */
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

/**
 * Creates the planned batch's state (or records a resume's new --output or --rpm), after checking that the
 * state and output directories take a file — before the first request: the report used to be
 * lost after every item ran (issue 13).
 */
export async function openPlannedBatch(
  plan: BatchPlan,
  state: ProjectState,
  outputGiven: boolean,
): Promise<{ spec: BatchSpec; dir: string; items?: readonly JobItem[] }> {
  const { spec } = plan;
  if (plan.kind === "resume") {
    await ensureWritableOutput(spec.outputDir);
    if (plan.respecified) await saveBatchSpec(plan.dir, spec);
    return { spec, dir: plan.dir };
  }
  // Issue 11's check (a directory, writable, with errno reasons), before anything is created.
  await checkWritableDir(batchesDir(state), {
    role: "batch state directory",
    fix: "Batches keep their journal there; set FORKLOOP_HOME or --state-dir to a writable directory.",
  });
  // The default output is the batch directory, which createBatch makes.
  if (outputGiven) await ensureWritableOutput(spec.outputDir);
  return { spec, dir: await createBatch(state, spec), items: plan.loaded.items };
}

function ensureWritableOutput(dir: string): Promise<void> {
  return checkWritableDir(dir, {
    role: "output directory",
    fix: "results.jsonl and the report go there: give a writable --output DIR.",
  });
}
