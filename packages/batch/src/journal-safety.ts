import { capitalize, errnoFix, errnoReason } from "@forkloop/sdk/errors";
import type { LogWriteError } from "./append-log.js";
import { BatchError } from "./batch-error.js";
import type { BatchSpec } from "./batch-store.js";
import type { OpenedJournal } from "./local-journal-backend.js";
import { plural } from "./plural.js";
import { checkWritableDir, JOURNAL_BYTES_PER_ITEM, REPORT_BYTES_PER_ITEM } from "./writable-dir.js";

/** R-R4: a torn last record is dropped and said once; a repair says what it kept. */
export function reportJournalRecovery(
  journal: OpenedJournal,
  path: string,
  notice: (line: string) => void,
): void {
  if (journal.tookOverLock !== undefined) notice(`forkloop: ${journal.tookOverLock}`);
  if (journal.tornBytes > 0) {
    notice(
      `forkloop: ${path} ended in a torn record (${journal.tornBytes} bytes, an interrupted write); it was dropped`,
    );
  }
  if (journal.repaired) {
    notice(
      `forkloop: repaired ${path}: kept ${plural(journal.repaired.keptRecords, "readable record")}, dropped ${plural(journal.repaired.droppedRecords, "damaged line")}; the damaged file is ${journal.repaired.backupPath}`,
    );
  }
}

/** Room for the journal and the report, checked before the first request. */
export async function checkBatchDirs(spec: BatchSpec, dir: string, items: number): Promise<void> {
  await checkWritableDir(dir, {
    role: "batch state directory",
    neededBytes: items * JOURNAL_BYTES_PER_ITEM,
    fix: "The journal and transcripts go there; set FORKLOOP_HOME or --state-dir to a writable directory.",
  });
  if (spec.outputDir !== dir) {
    await checkWritableDir(spec.outputDir, {
      role: "output directory",
      neededBytes: items * REPORT_BYTES_PER_ITEM,
      fix: "results.jsonl and the report go there: give a writable --output DIR.",
    });
  }
}

/** R-R4: the journal refused a record (full disk …): what is safe, and how to go on. */
export function journalWriteFailed(error: LogWriteError, id: string): BatchError {
  return new BatchError(
    "journal_write_failed",
    `cannot write the batch journal ${error.path}: ${errnoReason(error.code)}. Every result recorded before this is safe; the items that were running were stopped and will run again. ${capitalize(errnoFix(error.code))}, then \`forkloop batch --resume ${id}\`.`,
  );
}

export function reportWriteFailed(error: unknown, spec: BatchSpec): BatchError {
  const code = (error as NodeJS.ErrnoException).code ?? "";
  return new BatchError(
    "report_write_failed",
    `cannot write the report to ${spec.outputDir}: ${errnoReason(code)}. Every item's result is in the journal; ${errnoFix(code)}, then \`forkloop batch --resume ${spec.id}\` writes the report (finished items do not run again).`,
  );
}
