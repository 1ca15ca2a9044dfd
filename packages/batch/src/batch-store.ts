import { randomBytes } from "node:crypto";
import { access, mkdir, mkdtemp, readFile, rename, rm } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import {
  batchesDir,
  batchesDirs,
  checkId,
  isInCheckout,
  isInsideProject,
  isOwnState,
  notOwnStateError,
  type ProjectState,
  recordOwnState,
} from "@forkloop/sdk";
import { OptionsError } from "@forkloop/sdk/errors";
import { permissionModeFacts } from "@forkloop/tools";
import { replaceAtomically, syncDirectory, writeDurably } from "@forkloop/tools/workspace";
import { z } from "zod";
import {
  MAX_BATCH_TURNS,
  modelIdSchema,
  permissionModeSchema,
  ruleListSchema,
  safeIdSchema,
} from "./batch-setting-checks.js";

/**
 * What a batch was started with, kept in `batch.json` so `--resume <id>` needs no other flags,
 * and in Redis for a queued batch's workers: every setting that decides what an item may do is
 * held to what `forkloop batch` accepts as a flag (batch-setting-checks.ts, R-B1 trust).
 */
export const batchSpecSchema = z.object({
  id: safeIdSchema,
  createdAt: z.string(),
  cwd: z.string(),
  source: z.union([
    z.object({ kind: z.literal("files"), pattern: z.string() }),
    z.object({ kind: z.literal("items"), path: z.string() }),
  ]),
  prompt: z.string(),
  model: modelIdSchema,
  maxTurns: z.number().int().min(1).max(MAX_BATCH_TURNS),
  allowedTools: ruleListSchema,
  disallowedTools: ruleListSchema,
  permissionMode: permissionModeSchema,
  fallbackModels: z.array(modelIdSchema).max(16),
  appendSystemPrompt: z.string().optional(),
  /** `--mcp-config` (absolute paths, or JSON) and `--strict-mcp-config` (R-M1). */
  mcpConfig: z.array(z.string()).optional(),
  strictMcpConfig: z.boolean().optional(),
  outputDir: z.string(),
  /** A `--queue` batch (R-B1): the Redis it is on, so `batch list` / `status` say where its items run. */
  queue: z.string().optional(),
  /**
   * `--rpm N` (R-B1): model requests per minute. A local batch's limit lives in its
   * process; a resume keeps it, or saves the `--rpm` it is given.
   */
  rpm: z.number().int().min(1).max(1_000_000).optional(),
  /** R-B6 `--json-schema`: every item's final answer is JSON for this schema (structured outputs). */
  outputSchema: z.record(z.string(), z.unknown()).optional(),
  /** R-B7 `--reduce`: after the map, one agent runs this prompt over the items' results. */
  reduce: z.string().min(1).optional(),
  /**
   * R-R7: every start setting as given (the flags of `forkloop batch` that are neither about this
   * invocation nor the batch's items): a resume re-applies them, a resume's own replace them. The
   * fields above are what items and queue workers read; these are what the command started with.
   */
  startFlags: z
    .record(z.string(), z.union([z.string(), z.boolean(), z.array(z.union([z.string(), z.boolean()]))]))
    .optional(),
  /** Thinking, the summary model, context editing: flags and settings as resolved at the start. */
  loop: z
    .object({
      thinking: z
        .union([
          z.object({ type: z.literal("enabled"), budget_tokens: z.number().int().min(1).max(1_000_000) }),
          z.object({ type: z.literal("adaptive") }),
        ])
        .optional(),
      toolUseSummaryModel: modelIdSchema.optional(),
      contextEditing: z.boolean().optional(),
    })
    .optional(),
});
export type BatchSpec = z.infer<typeof batchSpecSchema>;

export function newBatchId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `b-${stamp}-${randomBytes(3).toString("hex")}`;
}

/** Where a new batch's state goes (state-dirs.ts: the user's forkloop directory, or --state-dir). */
export function batchDir(state: ProjectState, id: string): string {
  return join(batchesDir(state), checkId("batch", id));
}

/**
 * Creates the batch directory with its spec, atomically: the spec is written and fsync'd in a
 * staging directory that is then renamed into place. R-R4: a kill at any moment leaves either
 * no batch (start it again) or a batch with its batch.json (resume it) — never a directory that
 * can be neither started nor resumed.
 */
export async function createBatch(state: ProjectState, spec: BatchSpec): Promise<string> {
  const alreadyExists = (where: string) =>
    new OptionsError(
      `batch ${spec.id} already exists in ${where}; resume it with --resume ${spec.id} or pick another --id.`,
    );
  const existing = await findBatchDir(state, spec.id);
  if (existing.dir !== undefined || existing.shipped !== undefined)
    throw alreadyExists((existing.dir ?? existing.shipped) as string);
  const dir = batchDir(state, spec.id);
  const parent = batchesDir(state);
  await mkdir(parent, { recursive: true, mode: 0o700 });
  const staging = await mkdtemp(join(parent, `.staging-${spec.id}-`));
  try {
    await writeDurably(join(staging, "batch.json"), `${JSON.stringify(spec, null, 2)}\n`);
    await rename(staging, dir);
  } catch (error) {
    await rm(staging, { recursive: true, force: true }).catch(() => {});
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST" || code === "ENOTEMPTY") throw alreadyExists(dir);
    throw error;
  }
  await syncDirectory(parent);
  recordOwnState(state, dir);
  return dir;
}

/**
 * The directory of an existing batch: where new ones go first, then `<cwd>/.forkloop/batches` from
 * before — there only when the user's own record says forkloop made it (R-S11, owned-state.ts);
 * one a checkout shipped is `shipped`.
 */
async function findBatchDir(
  state: ProjectState,
  id: string,
): Promise<{ readonly dir?: string; readonly shipped?: string }> {
  let shipped: string | undefined;
  for (const dir of batchesDirs(state)) {
    const candidate = join(dir, checkId("batch", id));
    const found = await access(join(candidate, "batch.json")).then(
      () => true,
      () => false,
    );
    if (!found) continue;
    if (isOwnState(state, candidate)) return { dir: candidate };
    shipped ??= candidate;
  }
  return shipped === undefined ? {} : { shipped };
}

/** Rewrites `batch.json` (`--output` on a resume): a crash leaves the old spec or the new one. */
export function saveBatchSpec(dir: string, spec: BatchSpec): Promise<void> {
  return replaceAtomically(join(dir, "batch.json"), `${JSON.stringify(spec, null, 2)}\n`);
}

export async function loadBatch(state: ProjectState, id: string): Promise<{ spec: BatchSpec; dir: string }> {
  const { dir, shipped } = await findBatchDir(state, id);
  if (shipped !== undefined && dir === undefined)
    throw notOwnStateError(state, `batch ${id}`, shipped, batchesDir(state));
  if (dir === undefined) {
    throw new OptionsError(
      `no batch "${id}" in ${batchesDirs(state).join(" or ")}. Check the id (and --cwd, --state-dir); \`forkloop batch list\` lists them.`,
    );
  }
  const path = join(dir, "batch.json");
  const text = await readFile(path, "utf8");
  // R-R4: a damaged spec names the file and the way out, never a JSON stack trace.
  const damaged = (why: string) =>
    new OptionsError(
      `${path} is damaged (${why}); it holds the batch's settings (source, prompt, model), so the batch cannot resume without it. Restore it from a backup, or start a new batch with the same flags — the finished items' results stay in ${dir}.`,
    );
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw damaged(`not valid JSON: ${(error as Error).message}`);
  }
  const parsed = batchSpecSchema.safeParse(json);
  if (!parsed.success) throw damaged(`not a batch spec: ${parsed.error.issues[0]?.message ?? "invalid"}`);
  const spec = followBatchDir(parsed.data, dir);
  if (isInCheckout(state, dir)) refuseLoosening(state, spec, path);
  return { spec, dir };
}

/**
 * R-R12: results and the report go where the batch is. A spec whose output is a batch directory
 * of this id somewhere else (`…/batches/<id>`, the default when it started) was written before
 * the state directory moved (between a kill and a resume): the output follows the batch. An
 * `--output DIR` of the user's own keeps its path.
 */
function followBatchDir(spec: BatchSpec, dir: string): BatchSpec {
  const output = resolve(spec.outputDir);
  const wasDefault = basename(output) === spec.id && basename(dirname(output)) === "batches";
  return wasDefault && output !== resolve(dir) ? { ...spec, outputDir: dir } : spec;
}

/**
 * R-S11: even a batch of the user's own that lives in the checkout is not resumed with what a
 * file there can widen — a stored bypassPermissions, a working directory or report directory
 * outside the checkout (the checkout's files may have changed since; a `git pull` can rewrite it).
 */
function refuseLoosening(state: ProjectState, spec: BatchSpec, path: string): void {
  const outside = (where: string) => !isInsideProject(state, where);
  const problem = permissionModeFacts(spec.permissionMode).dangerous
    ? "its stored permission mode is bypassPermissions"
    : outside(spec.cwd)
      ? `its working directory ${spec.cwd} is outside the checkout ${state.projectRoot}`
      : outside(spec.outputDir)
        ? `its report directory ${spec.outputDir} is outside the checkout ${state.projectRoot}`
        : undefined;
  if (problem === undefined) return;
  throw new OptionsError(
    `${path} is inside the checkout and ${problem}; state found in a checkout is never resumed with that (a repository can ship or rewrite it). Start the batch again with the flags you want.`,
  );
}
