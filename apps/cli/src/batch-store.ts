import { randomBytes } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { batchesDir, checkId } from "@forkloop/sdk";
import { z } from "zod";
import { CliError } from "./cli-error.js";

/** What a batch was started with, kept in `batch.json` so `--resume <id>` needs no other flags. */
export const batchSpecSchema = z.object({
  id: z.string(),
  createdAt: z.string(),
  cwd: z.string(),
  source: z.union([
    z.object({ kind: z.literal("files"), pattern: z.string() }),
    z.object({ kind: z.literal("items"), path: z.string() }),
  ]),
  prompt: z.string(),
  model: z.string(),
  maxTurns: z.number().int().positive(),
  allowedTools: z.array(z.string()),
  disallowedTools: z.array(z.string()),
  permissionMode: z.string(),
  fallbackModels: z.array(z.string()),
  appendSystemPrompt: z.string().optional(),
  outputDir: z.string(),
});
export type BatchSpec = z.infer<typeof batchSpecSchema>;

/** Written once every item is durably enqueued (see commands/batch.ts `enqueueOnce`). */
export const ENQUEUED_MARKER = "enqueued.ok";

export function newBatchId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `b-${stamp}-${randomBytes(3).toString("hex")}`;
}

export function batchDir(cwd: string, id: string): string {
  return join(batchesDir(cwd), checkId("batch", id));
}

/** Creates the batch directory and writes its spec atomically (write + rename). */
export async function createBatch(spec: BatchSpec): Promise<string> {
  const dir = batchDir(spec.cwd, spec.id);
  await mkdir(batchesDir(spec.cwd), { recursive: true });
  try {
    await mkdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") {
      throw new CliError(
        `batch ${spec.id} already exists in ${dir}; resume it with --resume ${spec.id} or pick another --id.`,
      );
    }
    throw error;
  }
  const temporary = join(dir, "batch.json.tmp");
  await writeFile(temporary, `${JSON.stringify(spec, null, 2)}\n`);
  await rename(temporary, join(dir, "batch.json"));
  return dir;
}

export async function loadBatch(cwd: string, id: string): Promise<{ spec: BatchSpec; dir: string }> {
  const dir = batchDir(cwd, id);
  let text: string;
  try {
    text = await readFile(join(dir, "batch.json"), "utf8");
  } catch {
    throw new CliError(
      `no batch "${id}" in ${batchesDir(cwd)}. Check the id (and --cwd); batch ids are printed when a batch starts.`,
    );
  }
  const parsed = batchSpecSchema.safeParse(JSON.parse(text));
  if (!parsed.success)
    throw new CliError(`${join(dir, "batch.json")} is not a valid batch spec: ${parsed.error.message}`);
  return { spec: parsed.data, dir };
}
