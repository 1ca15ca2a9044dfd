import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { readReduce } from "./batch-reduce.js";
import { type BatchReport, buildReport } from "./batch-report.js";
import type { BatchSpec } from "./batch-store.js";
import type { ItemState } from "./job-backend.js";
import { reportWriteFailed } from "./journal-safety.js";
import { type WrittenReport, writeReport } from "./write-batch-report.js";

/**
 * R-R7: a finished batch's report, written again on its `--resume` (one that could not be written
 * before is written now). Whether its costs were simulated is what its last report said, else
 * whether a key is set now.
 */
export async function rewriteFinishedReport(
  spec: BatchSpec,
  dir: string,
  states: readonly ItemState[],
  env: Readonly<Record<string, string | undefined>>,
): Promise<{ report: BatchReport; paths: WrittenReport }> {
  const simulated = await readFile(join(spec.outputDir, "report.json"), "utf8").then(
    (text) => (JSON.parse(text) as { simulated?: unknown }).simulated === true,
    () => env.ANTHROPIC_API_KEY === undefined,
  );
  const reduce = spec.reduce === undefined ? undefined : await readReduce(dir);
  const report = buildReport(spec.id, states, 0, {
    simulated,
    transcriptsDir: join(dir, "transcripts"),
    ...(reduce === undefined ? {} : { reduce }),
  });
  const paths = await writeReport(spec.outputDir, report).catch((error: unknown) => {
    throw reportWriteFailed(error, spec);
  });
  return { report, paths };
}
