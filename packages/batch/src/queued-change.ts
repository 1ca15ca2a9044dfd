import type { FileChange } from "@forkloop/tools/workspace";
import { z } from "zod";

/**
 * R-B1, R-B2: an isolated queued item's change as it travels from its worker to the producer in
 * Redis — each changed path with its base and new content (base64; null for a created or deleted
 * file). The producer reads it as hostile input: paths are checked again where they are merged
 * (`mergeChanges` refuses a path outside the workspace and R-S10's execution points).
 */
const wireChangeSchema = z.object({
  path: z.string().min(1).max(4_096),
  before: z.string().base64().nullable(),
  after: z.string().base64().nullable(),
  mode: z.union([z.literal(0o644), z.literal(0o755)]),
  unsupported: z.string().max(200).optional(),
});
const wireChangesSchema = z.array(wireChangeSchema).max(100_000);

export function encodeChanges(changes: readonly FileChange[]): string {
  return JSON.stringify(
    changes.map((change) => ({
      path: change.path,
      before: change.before?.toString("base64") ?? null,
      after: change.after?.toString("base64") ?? null,
      mode: change.mode,
      ...(change.unsupported === undefined ? {} : { unsupported: change.unsupported }),
    })),
  );
}

/** The change a worker recorded; throws naming the problem when it is not one. */
export function decodeChanges(text: string): FileChange[] {
  const parsed = wireChangesSchema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error(`the change a worker returned is malformed: ${parsed.error.message}`);
  return parsed.data.map((change) => ({
    path: change.path,
    before: change.before === null ? null : Buffer.from(change.before, "base64"),
    after: change.after === null ? null : Buffer.from(change.after, "base64"),
    mode: change.mode,
    ...(change.unsupported === undefined ? {} : { unsupported: change.unsupported }),
  }));
}
