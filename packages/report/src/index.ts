export { type BuiltAgentView, buildAgentView } from "./agent-view.js";
export { type BatchItemInput, type BatchReportInput, loadBatchReport } from "./batch-report.js";
export { embeddedJson, type PageAssets, renderHtml } from "./html-document.js";
export { TextBudget, toMessageView } from "./message-view.js";
export { loadPageAssets } from "./page-assets.js";
export { renderBatchReport, renderSessionReport } from "./render-report.js";
export type * from "./report-data.js";
export { loadSessionReport, NotATranscriptError } from "./session-report.js";
