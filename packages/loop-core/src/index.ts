export type { CacheSafeParams } from "./cache-safe-params.js";
export type {
  AutoCompactTracking,
  ContextPipeline,
  ContextStageInput,
  ContextStageResult,
} from "./context-pipeline.js";
export { passthroughContextPipeline } from "./context-pipeline.js";
export type {
  LoopHooks,
  PostToolUseInput,
  PostToolUseOutcome,
  PreToolUseInput,
  PreToolUseOutcome,
  StopHookInput,
  StopHookOutcome,
} from "./hooks.js";
export type {
  ApiMessage,
  AssistantMessage,
  ContentBlock,
  ContentBlockParam,
  Message,
  MessageParam,
  RawMessageStreamEvent,
  StopReason,
  SystemMessage,
  TextBlockParam,
  ToolResultBlockParam,
  ToolUseBlock,
  Usage,
  UserMessage,
} from "./messages.js";
export type { ModelInfo } from "./model-catalog.js";
export { costUsd, getModelInfo } from "./model-catalog.js";
export type { CanUseTool, PermissionDecision, PermissionMode } from "./permissions.js";
export type { ContinueReason, Terminal, TerminalReason, UsageTotals } from "./terminal.js";
export { CONTINUE_REASONS, TERMINAL_REASONS } from "./terminal.js";
export { estimateMessageTokens, estimateTextTokens, tokenCountWithEstimation } from "./token-estimation.js";
export type { AgentState, TodoItem, Tool, ToolResult, ToolUseContext } from "./tool.js";
export { createAgentState } from "./tool.js";
