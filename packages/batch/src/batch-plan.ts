import { batchesDir, type ProjectState } from "@forkloop/sdk";
import { type ItemSource, type LoadedItems, loadItems } from "./batch-items.js";
import { type BatchSpec, batchDir, createBatch, newBatchId, saveBatchSpec } from "./batch-store.js";
import type { JobItem } from "./job-backend.js";
import { checkBatchSpec, newBatchSpec } from "./new-batch-spec.js";
import { changedSettings, type StartSettings } from "./resume-settings.js";
import { checkWritableDir } from "./writable-dir.js";

/** What the flags ask for, decided before anything is written: a new batch (items listed) or a resume. */
export type BatchPlan =
  | { readonly kind: "new"; readonly spec: BatchSpec; readonly loaded: LoadedItems }
  /**
   * `respecified`: the resume's flags changed batch.json; it is saved once the batch is locked,
   * and `changes` (`--concurrency 16 (was 8)`) are said once (R-R7).
   */
  | {
      readonly kind: "resume";
      readonly spec: BatchSpec;
      readonly dir: string;
      readonly respecified: boolean;
      readonly changes: readonly string[];
    };

/**
 * A new batch's plan (R-A4): its items listed — a typo or a bad item costs nothing — and its
 * batch.json, the defaults under the given `settings`, with the loop choices (thinking, the
 * summary model, context editing) and the start settings kept for every resume and queue worker.
 */
export async function planNewBatch(input: {
  /** Default: a new `b-<date>-<random>`. */
  readonly id?: string | undefined;
  readonly cwd: string;
  readonly source: ItemSource;
  readonly prompt: string;
  readonly state: ProjectState;
  /** The batch.json fields the caller sets (the flags given). */
  readonly settings: Partial<BatchSpec>;
  readonly loop: NonNullable<BatchSpec["loop"]>;
  /** R-R7: every start setting as given. */
  readonly startFlags: StartSettings;
}): Promise<BatchPlan> {
  const loaded = await loadItems(input.source, input.prompt);
  const id = input.id ?? newBatchId();
  const spec = newBatchSpec({
    id,
    cwd: input.cwd,
    source: input.source,
    prompt: input.prompt,
    dir: batchDir(input.state, id),
    settings: input.settings,
    loop: input.loop,
    startFlags: input.startFlags,
  });
  return { kind: "new", spec, loaded };
}

/**
 * R-R7: a resume runs with everything the batch started with; a setting it is given replaces the
 * stored one, is stored (held to the checks every resume applies), and is said once (`changes`).
 * `loop` only when one of its settings is given: else the stored choices stay.
 */
export function planResume(
  stored: { readonly spec: BatchSpec; readonly dir: string },
  given: {
    /** The batch.json fields the given settings set. */
    readonly settings: Partial<BatchSpec>;
    readonly loop?: BatchSpec["loop"];
    /** The start settings as given, laid over the stored ones. */
    readonly startFlags: StartSettings;
  },
): BatchPlan {
  const before = stored.spec.startFlags;
  const spec: BatchSpec = {
    ...stored.spec,
    ...given.settings,
    ...(given.loop === undefined ? {} : { loop: given.loop }),
    startFlags: { ...before, ...given.startFlags },
  };
  checkBatchSpec(spec);
  return {
    kind: "resume",
    spec,
    dir: stored.dir,
    respecified: JSON.stringify(spec) !== JSON.stringify(stored.spec),
    changes: changedSettings(before, given.startFlags),
  };
}

/**
 * Creates the planned batch's state and opens it with `open` (the journal, which locks the batch),
 * after checking that the state and output directories take a file — before the first request:
 * the report used to be lost after every item ran. A resume's changed settings are
 * saved only once the batch is locked (R-R5: a second resume must not rewrite batch.json).
 */
export async function openPlannedBatch<Opened extends { close(): Promise<void> }>(
  plan: BatchPlan,
  state: ProjectState,
  outputGiven: boolean,
  open: (dir: string) => Promise<Opened>,
): Promise<{ spec: BatchSpec; dir: string; items?: readonly JobItem[]; opened: Opened }> {
  const { spec } = plan;
  if (plan.kind === "resume") {
    const opened = await open(plan.dir);
    try {
      await ensureWritableOutput(spec.outputDir);
      if (plan.respecified) await saveBatchSpec(plan.dir, spec);
    } catch (error) {
      await opened.close();
      throw error;
    }
    return { spec, dir: plan.dir, opened };
  }
  const created = await createPlannedBatch(plan, state, outputGiven);
  return { ...created, opened: await open(created.dir) };
}

/** A new batch's state: its directory and batch.json, made once the directories are checked. */
export async function createPlannedBatch(
  plan: Extract<BatchPlan, { kind: "new" }>,
  state: ProjectState,
  outputGiven: boolean,
): Promise<{ spec: BatchSpec; dir: string; items: readonly JobItem[] }> {
  // The state directory's check (a directory, writable, with errno reasons), before anything is created.
  await checkWritableDir(batchesDir(state), {
    role: "batch state directory",
    fix: "Batches keep their journal there; set FORKLOOP_HOME or --state-dir to a writable directory.",
  });
  // The default output is the batch directory, which createBatch makes.
  if (outputGiven) await ensureWritableOutput(plan.spec.outputDir);
  return { spec: plan.spec, dir: await createBatch(state, plan.spec), items: plan.loaded.items };
}

function ensureWritableOutput(dir: string): Promise<void> {
  return checkWritableDir(dir, {
    role: "output directory",
    fix: "results.jsonl and the report go there: give a writable --output DIR.",
  });
}
