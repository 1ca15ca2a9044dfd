import { OptionsError } from "@forkloop/sdk/errors";
import { type ItemSource, loadItems } from "./batch-items.js";
import type { BatchSpec } from "./batch-store.js";
import { sealOf } from "./enqueue-seal.js";
import type { BatchLedger, JobItem } from "./job-backend.js";
import { plural } from "./plural.js";

/** Where a batch's items can be listed again, when its ledger says enqueueing did not finish. */
export interface ItemRelist {
  /** For messages: `the files of "src/**"`, `items.jsonl`, `the items stored with the batch`. */
  readonly description: string;
  list(): Promise<readonly JobItem[]>;
  /**
   * When the ledger holds other items than its seal says: the command that lists them again
   * (a local journal's `--repair`); undefined to list them again without asking (a queue, whose
   * stored item list is the batch's own).
   */
  readonly repairCommand?: string;
}

/**
 * Enqueues the batch's items once, on any backend (R-B1): the ledger's seal is written
 * only after every item is durably enqueued, so a crash during enqueueing is seen on resume (no
 * seal): the items are listed again and enqueued (idempotent by id), and none is lost. R-R4:
 * on resume the seal is checked against the ledger; a ledger that holds fewer items than the seal
 * says lost records (a journal truncated, emptied, deleted) — the resume stops (exit 2) unless
 * the repair lists the source again. `items` is undefined on resume.
 */
export async function enqueueOnce(
  ledger: BatchLedger,
  items: readonly JobItem[] | undefined,
  options: { readonly relist: ItemRelist; readonly repair: boolean; readonly notice: (line: string) => void },
): Promise<void> {
  if (items === undefined) {
    const seal = await ledger.enqueueSeal();
    const ids = (await ledger.list()).map((state) => state.item.id);
    if (seal === "unverifiable") return;
    if (seal !== undefined) {
      const found = sealOf(ids);
      if (found.items === seal.items && found.digest === seal.digest) return;
      const { repairCommand } = options.relist;
      if (repairCommand !== undefined && !options.repair) {
        const what =
          ids.length < seal.items
            ? `holds ${plural(ids.length, "item")}, but its enqueue seal says ${seal.items} were enqueued: it lost records (truncated, emptied or deleted)`
            : "holds other items than its enqueue seal says were enqueued";
        throw new OptionsError(
          `${ledger.location} ${what}; nothing was run. Resume with \`${repairCommand}\` to list ${options.relist.description} again and run what it does not know.`,
        );
      }
    }
    items = await options.relist.list();
    if (seal !== undefined) {
      options.notice(
        `forkloop: listed ${options.relist.description} again: ${plural(items.length, "item")}; ${plural(Math.max(0, items.length - ids.length), "item")} ${ledger.location} did not know will run`,
      );
    }
  }
  await ledger.enqueue(items);
  await ledger.sealEnqueue(sealOf((await ledger.list()).map((state) => state.item.id)));
}

/** A local batch lists its items again from its source: the files' pattern or the JSONL file. */
export function relistFromSource(spec: BatchSpec): ItemRelist {
  const source: ItemSource =
    spec.source.kind === "files"
      ? { kind: "files", pattern: spec.source.pattern, cwd: spec.cwd }
      : { kind: "items", path: spec.source.path };
  return {
    description: spec.source.kind === "files" ? `the files of "${spec.source.pattern}"` : spec.source.path,
    list: async () => (await loadItems(source, spec.prompt)).items,
    repairCommand: `forkloop batch --resume ${spec.id} --repair`,
  };
}
