import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import type { ModelInfo } from "@forkloop/loop-core";
import { lazySchema } from "@forkloop/loop-core";
// The model registry alone: the simulator itself loads only when it starts (R-V2).
import { type ModelSpec, resolveModel } from "@forkloop/sim/models";
import { z } from "zod";
import { OptionsError } from "./options-error.js";

/**
 * A models file: a JSON list of model specs that add to or override the known models, e.g. a
 * model with a tiny context window so compaction and the context limit can be exercised without
 * megabytes of input. The same file feeds both sides, so they agree on the window:
 * - `forkloop sim --models FILE` (and the embedded simulator): the simulator's registry, which
 *   decides `prompt is too long` and prices the usage;
 * - `FORKLOOP_MODELS=FILE` for `run`/`batch`: the client's model info, from which loop-core and
 *   compaction derive the auto-compact and blocking thresholds (`getModelInfo(model, overrides)`).
 *
 * An entry whose `id` names a known model (or alias) inherits every field it leaves out from
 * that model; a new id must give `contextWindow` and `maxOutputTokens`.
 */
const entrySchema = lazySchema(() =>
  z
    .strictObject({
      id: z.string().min(1, "give the model id the requests use, e.g. claude-sonnet-4-6"),
      aliases: z.array(z.string().min(1)).optional(),
      contextWindow: z.int().positive().optional(),
      maxOutputTokens: z.int().positive().optional(),
      inputPricePerMTok: z.number().nonnegative().optional(),
      outputPricePerMTok: z.number().nonnegative().optional(),
      minCacheableTokens: z.int().nonnegative().optional(),
    })
    .transform((entry, ctx): ModelSpec => {
      const known = resolveModel(entry.id);
      const contextWindow = entry.contextWindow ?? known?.contextWindow;
      const maxOutputTokens = entry.maxOutputTokens ?? known?.maxOutputTokens;
      if (contextWindow === undefined || maxOutputTokens === undefined) {
        ctx.addIssue({
          code: "custom",
          message: `"${entry.id}" is not a known model, so give contextWindow and maxOutputTokens`,
        });
        return z.NEVER;
      }
      if (maxOutputTokens >= contextWindow) {
        ctx.addIssue({ code: "custom", message: "maxOutputTokens must be below contextWindow" });
        return z.NEVER;
      }
      return {
        // Thinking support, prefill and tokenizer of the known model; a new id gets a 4.6-like model.
        thinking: { enabled: true, adaptive: true, disabled: true },
        ...known,
        id: entry.id,
        aliases: entry.aliases ?? (known?.id === entry.id ? known.aliases : []),
        contextWindow,
        maxOutputTokens,
        inputPricePerMTok: entry.inputPricePerMTok ?? known?.inputPricePerMTok ?? 3,
        outputPricePerMTok: entry.outputPricePerMTok ?? known?.outputPricePerMTok ?? 15,
        minCacheableTokens: entry.minCacheableTokens ?? known?.minCacheableTokens ?? 1024,
      };
    }),
);

export const modelsFileSchema = lazySchema(() => z.array(entrySchema).min(1, "list at least one model"));

export const MODELS_FILE_EXAMPLE =
  '[{"id":"claude-sonnet-4-6","contextWindow":24000,"maxOutputTokens":2000}]';

/**
 * Reads and validates a models file; any problem is exit 2 naming the file, the entry and the fix.
 * A relative `path` is read from `dir` (the project directory) when given: the caller's directory,
 * not whatever directory the process happens to be in.
 */
export async function loadModelsFile(path: string, origin: string, dir?: string): Promise<ModelSpec[]> {
  let text: string;
  try {
    text = await readFile(dir === undefined ? path : resolve(dir, path), "utf8");
  } catch (error) {
    throw new OptionsError(
      `${origin} ${path}: cannot read it (${(error as NodeJS.ErrnoException).code ?? error}).`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new OptionsError(
      `${origin} ${path}: not JSON (${(error as Error).message}). Example: ${MODELS_FILE_EXAMPLE}`,
    );
  }
  const parsed = modelsFileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `${issue.path.join(".")}: ` : "";
    throw new OptionsError(`${origin} ${path}: ${where}${issue?.message}. Example: ${MODELS_FILE_EXAMPLE}`);
  }
  return parsed.data;
}

/**
 * The client's view of the specs: loop-core's ModelInfo, once per id and per alias, because
 * `getModelInfo(model, overrides)` matches overrides by the exact string the request sends.
 */
export function toModelOverrides(specs: readonly ModelSpec[]): ModelInfo[] {
  return specs.flatMap((spec) =>
    [spec.id, ...spec.aliases].map((id) => ({
      id,
      contextWindow: spec.contextWindow,
      maxOutputTokens: spec.maxOutputTokens,
      inputPricePerMTok: spec.inputPricePerMTok,
      outputPricePerMTok: spec.outputPricePerMTok,
    })),
  );
}
