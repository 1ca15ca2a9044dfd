import { readFile } from "node:fs/promises";

/** A record of a queued batch's applies.log (the producer's apply journal), as the tests read it. */
export interface AppliesRecord {
  readonly type: string;
  readonly id?: string;
  readonly item?: { readonly id: string };
  readonly ids?: readonly string[];
  /** An `applying_group` record's items: their changes applied from one plan. */
  readonly members?: readonly { readonly item: { readonly id: string } }[];
  readonly outcome?: { readonly ok: boolean; readonly error?: { readonly code: string } };
}

/** The whole records of applies.log at `path` (none when it does not exist yet). */
export async function appliesRecords(path: string): Promise<AppliesRecord[]> {
  return (await readFile(path, "utf8").catch(() => ""))
    .split("\n")
    .filter((line) => line.endsWith("}"))
    .map((line) => JSON.parse(line.slice(line.indexOf(" ") + 1)) as AppliesRecord);
}

/** The items an `applying` or `applying_group` record names (none for another record). */
export function appliedIds(record: AppliesRecord): string[] {
  if (record.type === "applying") return record.item === undefined ? [] : [record.item.id];
  if (record.type === "applying_group") return (record.members ?? []).map((member) => member.item.id);
  return [];
}
