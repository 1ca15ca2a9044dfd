import { readFile } from "node:fs/promises";

/** A record of a queued batch's applies.log (the producer's apply journal), as the tests read it. */
export interface AppliesRecord {
  readonly type: string;
  readonly id?: string;
  readonly item?: { readonly id: string };
  readonly ids?: readonly string[];
  readonly outcome?: { readonly ok: boolean; readonly error?: { readonly code: string } };
}

/** The whole records of applies.log at `path` (none when it does not exist yet). */
export async function appliesRecords(path: string): Promise<AppliesRecord[]> {
  return (await readFile(path, "utf8").catch(() => ""))
    .split("\n")
    .filter((line) => line.endsWith("}"))
    .map((line) => JSON.parse(line.slice(line.indexOf(" ") + 1)) as AppliesRecord);
}
