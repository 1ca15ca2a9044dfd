/**
 * The report page's script (bundled with Chart.js into dist/page/viewer.js and inlined into every
 * report). It reads the JSON the generator embedded and draws the session or batch view.
 */
import type { ReportData } from "../report-data.js";
import { renderBatch } from "./batch-view.js";
import { charts } from "./charts.js";
import { h, replace } from "./dom.js";
import { renderSession } from "./session-view.js";

declare global {
  interface Window {
    /** The report's data and its charts by name, for a look from the console (and the tests). */
    forkloopReport?: { readonly data: ReportData; readonly charts: typeof charts };
  }
}

function start(): void {
  const root = document.getElementById("app");
  const source = document.getElementById("report-data");
  if (!root || !source?.textContent) return;
  const data = JSON.parse(source.textContent) as ReportData;
  window.forkloopReport = { data, charts };
  document.title = data.kind === "session" ? data.title : `Batch ${data.batchId}`;
  try {
    if (data.kind === "session") renderSession(root, data);
    else renderBatch(root, data);
  } catch (error) {
    replace(root, h("p", { class: "problem" }, `This report could not be drawn: ${String(error)}`));
    throw error;
  }
  // Charts are created once their boxes are in the document (a microtask later); then say ready.
  queueMicrotask(() => requestAnimationFrame(() => document.body.setAttribute("data-ready", "true")));
}

start();
