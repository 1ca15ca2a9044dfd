import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { OptionsError } from "@forkloop/sdk/errors";
import { type ItemSource, loadItems } from "./batch-items.js";
import { type BatchSpec, ENQUEUED_MARKER } from "./batch-store.js";
import { replaceAtomically } from "./durable-file.js";
import type { JobBackend, JobItem } from "./job-backend.js";
import { plural } from "./plural.js";

/** What `enqueued.ok` says: how many items were durably enqueued, and which (a digest of ids). */
interface EnqueueMarker {
  readonly items: number;
  readonly digest: string;
}

/**
 * Enqueues the batch's items once. The marker file is written — atomically — only after every
 * enqueue record is durable, so a crash during enqueueing is seen on resume (no marker): the
 * items are listed again from the batch's source and enqueued (idempotent by id), and none is
 * lost. Issue 11: on resume the marker is checked against the journal; a journal that holds
 * fewer items than the marker says lost its enqueue records (truncated, emptied, deleted) — the
 * resume stops (exit 2) unless `--repair` lists the source again.
 */
export async function enqueueOnce(
  backend: JobBackend,
  dir: string,
  spec: BatchSpec,
  items: readonly JobItem[] | undefined,
  options: { readonly repair: boolean; readonly notice: (line: string) => void },
): Promise<void> {
  const markerPath = join(dir, ENQUEUED_MARKER);
  if (items === undefined) {
    const marker = await readMarker(markerPath);
    const ids = (await backend.list()).map((state) => state.item.id);
    const known = ids.length;
    if (marker === "unreadable") return;
    if (marker !== undefined && known === marker.items && digestOf(ids) === marker.digest) return;
    if (marker !== undefined && !options.repair) {
      const what =
        known < marker.items
          ? `holds ${plural(known, "item")}, but ${markerPath} says ${marker.items} were enqueued: the journal lost records (truncated, emptied or deleted)`
          : `holds other items than ${markerPath} says were enqueued`;
      throw new OptionsError(
        `${join(dir, "journal.log")} ${what}; nothing was run. Resume with \`forkloop batch --resume ${spec.id} --repair\` to list ${describeSource(spec)} again and run what the journal does not know.`,
      );
    }
    items = (await loadItems(sourceOf(spec), spec.prompt)).items;
    if (marker !== undefined) {
      options.notice(
        `forkloop: listed ${describeSource(spec)} again: ${plural(items.length, "item")}; ${plural(Math.max(0, items.length - known), "item")} the journal did not know will run`,
      );
    }
  }
  await backend.enqueue(items);
  const ids = (await backend.list()).map((state) => state.item.id);
  const marker: EnqueueMarker = { items: ids.length, digest: digestOf(ids) };
  await replaceAtomically(markerPath, `${JSON.stringify(marker)}\n`);
}

/** The marker, undefined when missing, "unreadable" when it predates the item count. */
async function readMarker(path: string): Promise<EnqueueMarker | "unreadable" | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Partial<EnqueueMarker>;
    return typeof parsed.items === "number" && typeof parsed.digest === "string"
      ? { items: parsed.items, digest: parsed.digest }
      : "unreadable";
  } catch {
    return "unreadable"; // an older marker (a timestamp line): no count to check against
  }
}

function digestOf(ids: readonly string[]): string {
  return createHash("sha256")
    .update([...ids].sort().join("\n"))
    .digest("hex");
}

function sourceOf(spec: BatchSpec): ItemSource {
  return spec.source.kind === "files"
    ? { kind: "files", pattern: spec.source.pattern, cwd: spec.cwd }
    : { kind: "items", path: spec.source.path };
}

function describeSource(spec: BatchSpec): string {
  return spec.source.kind === "files" ? `the files of "${spec.source.pattern}"` : spec.source.path;
}
