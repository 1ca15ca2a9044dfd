export { onAbort } from "./abort-fan-out.js";
export { loadAnthropicSdk } from "./anthropic-sdk.js";
export {
  type WithheldKind,
  withheldKind,
} from "./api-error-kinds.js";
export { type ToApiMessagesOptions, toApiMessages } from "./api-messages.js";
export { apiOutputSchema } from "./api-output-schema.js";
export {
  type BuildRequestInput,
  buildRequest,
  buildSystemBlocks,
  type MessageCreateParams,
  type ThinkingConfigParam,
  type ToolDefinition,
  toolDefinition,
  toolDefinitions,
} from "./build-request.js";
export {
  buildCacheSafeParams,
  type CacheSafeParams,
  type CacheSafeRequest,
  type RequestPrefix,
} from "./cache-safe-params.js";
export { closestName } from "./closest-name.js";
export {
  type AppliedEdit,
  apiMicrocompactBoundary,
  CONTEXT_MANAGEMENT_BETA,
  type ContextEditingConfig,
  contextManagementParam,
} from "./context-editing.js";
export type {
  AutoCompactTracking,
  ContextPipeline,
  ContextStageInput,
  ContextStageResult,
} from "./context-pipeline.js";
export { passthroughContextPipeline } from "./context-pipeline.js";
export {
  MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES,
  MIN_AUTOCOMPACT_WINDOW_TOKENS,
  type Thresholds,
  thresholdsFor,
} from "./context-thresholds.js";
export {
  apiErrorText,
  type CreateMessageOptions,
  createApiErrorMessage,
  createAssistantMessage,
  createSystemMessage,
  createUserMessage,
  INTERRUPT_MESSAGE,
  INTERRUPT_MESSAGE_FOR_TOOL_USE,
} from "./create-message.js";
export {
  FallbackTriggeredError,
  ForkloopError,
  type ForkloopErrorOptions,
  MalformedStreamError,
} from "./errors.js";
export type {
  InstructionsLoadedInput,
  InstructionsLoadedOutcome,
  LoopHooks,
  PostCompactInput,
  PostToolBatchCall,
  PostToolBatchInput,
  PostToolBatchOutcome,
  PostToolUseInput,
  PostToolUseOutcome,
  PreCompactInput,
  PreCompactOutcome,
  PreToolUseInput,
  PreToolUseOutcome,
  PromptExpansion,
  ResumedCache,
  SessionStartInput,
  SessionStartOutcome,
  StopFailureInput,
  StopHookInput,
  StopHookOutcome,
  SubagentStartInput,
  SubagentStartOutcome,
  UserPromptExpansionInput,
  UserPromptExpansionOutcome,
  UserPromptSubmitInput,
  UserPromptSubmitOutcome,
} from "./hooks.js";
export {
  type JsonSchemaInput,
  type JsonSchemaInputResult,
  type JsonSchemaObject,
  jsonSchemaInput,
} from "./json-schema-input.js";
export { lazySchema } from "./lazy-schema.js";
export type {
  HistoryReplacedEvent,
  LoopEvent,
  RequestStartEvent,
  StateSnapshotEvent,
} from "./loop-events.js";
export { lastAssistantText } from "./loop-messages.js";
export {
  DEFAULT_MAX_OUTPUT_TOKENS,
  ESCALATED_MAX_OUTPUT_TOKENS,
  freshTurnState,
  type LoopState,
  MAX_OUTPUT_TOKENS_RECOVERY_LIMIT,
  NO_REACTIVE_COMPACT_ATTEMPTED,
  type QueryConfig,
  type QueuedCommand,
  type ReactiveCompactGuards,
  SUBMIT_INTERRUPT_REASON,
  type Transition,
} from "./loop-state.js";
export { type StepConfig, type StepDecision, type StepEvent, type StepState, step } from "./loop-step.js";
export { createProcessMark, endMarked, type ProcessMark } from "./marked-processes.js";
export { MessageAccumulator } from "./message-accumulator.js";
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
  ToolResultMeta,
  ToolUseBlock,
  Usage,
  UserMessage,
} from "./messages.js";
export { yieldMissingToolResultBlocks } from "./missing-tool-results.js";
export type { ModelInfo } from "./model-catalog.js";
export {
  costUsd,
  effortForModel,
  getModelInfo,
  listModels,
  type ModelAliasEnv,
  resolveModelAlias,
  takesSystemMessages,
} from "./model-catalog.js";
export {
  type ApiRetryEvent,
  type BeforeSend,
  buildModelRequestBody,
  callModel,
  formatWait,
  type ModelCallRequest,
  type ModelEvent,
  type OutputConfig,
  QUERY_SOURCE_HEADER,
  type RetryClock,
  type RetryOptions,
  SYSTEM_CLOCK,
} from "./model-client.js";
export { describeBody, isWrongEndpointMessage } from "./model-failure.js";
export type { EffortLevel, Lifecycle, ModelLine, ModelRow } from "./model-table.js";
export { BATCH_DISCOUNT, MODEL_TABLE } from "./model-table.js";
export type { CanUseTool, PermissionDecision, PermissionMode, PermissionProvenance } from "./permissions.js";
export { promptHookLabel } from "./post-tool-batch.js";
export { type QueryParams, query, stripThinkingBlocks } from "./query.js";
export { productionDeps, type QueryDeps } from "./query-deps.js";
export { defaultMaxOutputTokens } from "./query-params.js";
export { StreamingToolExecutor } from "./streaming-tool-executor.js";
export type { ContinueReason, Terminal, TerminalReason, UsageTotals } from "./terminal.js";
export { CONTINUE_REASONS, TERMINAL_REASONS } from "./terminal.js";
export { type BudgetDecision, type BudgetTracker, checkTokenBudget } from "./token-budget.js";
export {
  estimateMessageTokens,
  estimateTextTokens,
  reportedTokens,
  tokenCountWithEstimation,
} from "./token-estimation.js";
export type { AgentState, TodoItem, Tool, ToolAnnotations, ToolResult, ToolUseContext } from "./tool.js";
export { annotationTraits, createAgentState, toolUseResultOf } from "./tool.js";
export { runToolUse, type ToolRunOptions, type ToolRunOutcome, toolResultMessage } from "./tool-execution.js";
export type { ToolUseSummaryEvent } from "./tool-use-summary.js";
export { sumUsage, usageTotalsOf, ZERO_USAGE_TOTALS } from "./usage-counter.js";
