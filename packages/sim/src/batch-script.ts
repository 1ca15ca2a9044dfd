import { SimError } from "./sim-error.js";

/**
 * A scripted control of the Message Batches a simulator processes (R-D4, R-B8): what the API
 * does to a batch now and then — expire it before every request ran, cancel it (as another
 * client of the workspace may), fail single entries — on demand, so a batch runtime's recovery
 * is tested against the simulator's real endpoints, not a mock of its client. Batches are
 * numbered from 1 in creation order, entries from 1 in request order.
 *
 * Spec: comma-separated items —
 * - `expire@N` / `expire@N:after=K`: batch N ends `expired` (the first K entries ran first);
 * - `cancel@N` / `cancel@N:after=K`: batch N is canceled while processing (K entries ran);
 * - `STATUS@N.E`: entry E of batch N ends `errored` with the API error of that status
 *   (`529@2.3` overloaded_error, `500@1.1` api_error, `429@…` rate_limit_error, `400@…`).
 */
export type BatchScriptItem =
  | { readonly kind: "expire" | "cancel"; readonly batch: number; readonly after: number }
  | { readonly kind: "error"; readonly batch: number; readonly entry: number; readonly status: number };

export type BatchScript = readonly BatchScriptItem[];

/** A `--batch-script` the simulator cannot follow: the message names the item and the fix. */
export class BatchScriptError extends SimError {
  override readonly name = "BatchScriptError";
  constructor(message: string) {
    super("invalid_batch_script", message);
  }
}

export function parseBatchScript(spec: string): BatchScript {
  const items: BatchScriptItem[] = [];
  for (const raw of spec.split(",").map((part) => part.trim())) {
    if (raw === "") continue;
    const whole = /^(expire|cancel)@(\d+)(?::after=(\d+))?$/.exec(raw);
    if (whole) {
      items.push({
        kind: whole[1] as "expire" | "cancel",
        batch: positive(whole[2]!, raw),
        after: Number(whole[3] ?? 0),
      });
      continue;
    }
    const entry = /^(\d{3})@(\d+)\.(\d+)$/.exec(raw);
    if (entry) {
      const status = Number(entry[1]);
      if (status < 400 || status > 599) throw new BatchScriptError(`${raw}: the status must be 400–599`);
      items.push({ kind: "error", batch: positive(entry[2]!, raw), entry: positive(entry[3]!, raw), status });
      continue;
    }
    throw new BatchScriptError(
      `${raw}: expected expire@N, expire@N:after=K, cancel@N[:after=K] or STATUS@N.E (e.g. 529@1.2)`,
    );
  }
  return items;
}

function positive(text: string, raw: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new BatchScriptError(`${raw}: batches and entries count from 1`);
  return n;
}

/** What the script does to batch `batch` (1-based): an early end, and the entries that error. */
export function scriptFor(
  script: BatchScript,
  batch: number,
): { end?: { kind: "expire" | "cancel"; after: number }; errors: ReadonlyMap<number, number> } {
  const errors = new Map<number, number>();
  let end: { kind: "expire" | "cancel"; after: number } | undefined;
  for (const item of script) {
    if (item.batch !== batch) continue;
    if (item.kind === "error") errors.set(item.entry, item.status);
    else end ??= { kind: item.kind, after: item.after };
  }
  return end === undefined ? { errors } : { end, errors };
}
