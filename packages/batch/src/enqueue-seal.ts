import { createHash } from "node:crypto";
import { readIfPresent, replaceAtomically } from "@forkloop/tools/workspace";
import type { EnqueueSeal } from "./job-backend.js";

/**
 * The enqueue seal (R-B1): how many items were enqueued and a digest of their ids,
 * order-free, so a resume can tell a complete item list from one that lost records.
 */
export function sealOf(ids: readonly string[]): EnqueueSeal {
  const digest = createHash("sha256")
    .update([...ids].sort().join("\n"))
    .digest("hex");
  return { items: ids.length, digest };
}

/** Reads a seal stored as JSON; "unverifiable" for an older one (a timestamp line, no count). */
export function parseSeal(text: string): EnqueueSeal | "unverifiable" {
  try {
    const parsed = JSON.parse(text) as Partial<EnqueueSeal>;
    return typeof parsed.items === "number" && typeof parsed.digest === "string"
      ? { items: parsed.items, digest: parsed.digest }
      : "unverifiable";
  } catch {
    return "unverifiable";
  }
}

/**
 * The local journal's seal lives in a file beside the journal, not in it: a journal that was
 * truncated, emptied or deleted must not take the evidence of its loss with it (R-R4).
 */
export async function readSealFile(path: string): Promise<EnqueueSeal | "unverifiable" | undefined> {
  const text = await readIfPresent(path);
  return text === undefined ? undefined : parseSeal(text);
}

export function writeSealFile(path: string, seal: EnqueueSeal): Promise<void> {
  return replaceAtomically(path, `${JSON.stringify(seal)}\n`);
}
