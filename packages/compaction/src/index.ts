export {
  apiMicrocompactEdits,
  MICROCOMPACT_CLEAR_AT_LEAST_SHARE,
  MICROCOMPACT_KEEP_RECENT,
  MICROCOMPACT_TRIGGER_RATIO,
} from "./api-microcompact.js";
export { applyCollapse, type CollapsibleSpan, findCollapsibleSpans, planCollapse } from "./collapse.js";
export {
  type CompactConversationInput,
  type CompactOutcome,
  type CompactRequest,
  type CompactRunner,
  type CompactRunResult,
  type CompactSource,
  type CompactTrigger,
  compactConversation,
  type RecentFilesOptions,
} from "./compact-conversation.js";
export type { CompactionEvent } from "./events.js";
export type { MessageFactory } from "./message-shape.js";
export {
  CLEARED_TOOL_RESULT,
  type ClearCandidate,
  clearToolResults,
  selectToolResultsToClear,
} from "./microcompact.js";
export { type CompactionPipeline, type ContextPipelineOptions, createContextPipeline } from "./pipeline.js";
export {
  protectedTailStart,
  type ShrunkTail,
  shrinkProtectedTail,
  TAIL_RESULT_MIN_TOKENS,
} from "./protected-tail.js";
export { createQueryCompactRunner, type QueryCompactRunnerOptions } from "./query-compact-runner.js";
export { attachRecentFiles, recentlyTouchedFiles } from "./recent-files.js";
export {
  buildSessionMemoryInstruction,
  createFileSessionMemoryStore,
  createMemorySessionMemoryStore,
  type SessionMemoryStore,
  type SessionNotes,
  shouldUpdateSessionMemory,
} from "./session-memory.js";
export { planSnip, type SnipPlan } from "./snip.js";
export {
  buildCompactInstruction,
  buildTruncationSummary,
  extractSummary,
  findActiveTask,
  SUMMARY_SECTIONS,
  type SummaryVerdict,
  validateSummary,
} from "./summary.js";
export {
  type AutoCompactDecision,
  decideAutoCompact,
  isCompactionFork,
  MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES,
  type Thresholds,
  thresholdsFor,
} from "./thresholds.js";
export { applyToolResultBudget } from "./tool-result-budget.js";
