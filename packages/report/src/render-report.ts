import { type BatchReportInput, loadBatchReport } from "./batch-report.js";
import { renderHtml } from "./html-document.js";
import { loadPageAssets } from "./page-assets.js";
import { loadSessionReport } from "./session-report.js";

/** The HTML report of a session (its transcript and every fork it links). */
export async function renderSessionReport(transcriptPath: string): Promise<string> {
  const [data, assets] = await Promise.all([loadSessionReport(transcriptPath), loadPageAssets()]);
  return renderHtml(data, assets);
}

/** The HTML report of a batch, from the items the batch's journal holds. */
export async function renderBatchReport(input: BatchReportInput): Promise<string> {
  const [data, assets] = await Promise.all([loadBatchReport(input), loadPageAssets()]);
  return renderHtml(data, assets);
}
