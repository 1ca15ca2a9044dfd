import type Anthropic from "@anthropic-ai/sdk";
import type { ThinkingConfigParam, ToolUnion } from "./build-request.js";
import type { ContextEditingConfig } from "./context-editing.js";
import type { ContextPipeline } from "./context-pipeline.js";
import type { LoopHooks } from "./hooks.js";
import {
  DEFAULT_MAX_OUTPUT_TOKENS,
  ESCALATED_MAX_OUTPUT_TOKENS,
  type QueryConfig,
  type QueuedCommand,
} from "./loop-state.js";
import type { Message, TextBlockParam } from "./messages.js";
import { getModelInfo, type ModelInfo, resolveModelAlias } from "./model-catalog.js";
import type { BeforeSend, OutputConfig, RetryOptions } from "./model-client.js";
import type { CanUseTool } from "./permissions.js";
import type { QueryDeps } from "./query-deps.js";
import type { ToolUseContext } from "./tool.js";

export interface QueryParams {
  /** History, ending with the new user message. */
  readonly messages: readonly Message[];
  readonly systemPrompt: string | readonly TextBlockParam[];
  readonly toolUseContext: ToolUseContext;
  /**
   * R-F3: the definitions a parent sent for `toolUseContext.tools`, sent as they are (a fork's
   * prefix travels as bytes); default: built from the tools.
   */
  readonly toolDefinitions?: readonly ToolUnion[];
  /** 'sdk' | 'repl_main_thread' | 'agent:<name>' | 'compact' | 'session_memory' | … (R-L3). */
  readonly querySource: string;
  /** Default: allow everything. */
  readonly canUseTool?: CanUseTool;
  readonly hooks?: LoopHooks;
  /** Default: `passthroughContextPipeline`. */
  readonly contextPipeline?: ContextPipeline;
  /** Used by `productionDeps().callModel`; default `new Anthropic()` from the environment. */
  readonly client?: Anthropic;
  /** R-L8: models tried, in order, after `toolUseContext.options.model` stays overloaded. */
  readonly fallbackModels?: readonly string[];
  /** R-L19. */
  readonly maxTurns?: number;
  /** Default 8_000; R-L10 escalates to 64_000 once. */
  readonly maxOutputTokens?: number;
  /** R-L17. */
  readonly thinking?: ThinkingConfigParam;
  /** R-L14: the user's token target for this turn ("+500k"). */
  readonly tokenBudget?: number;
  /** R-L3: API-level task budget. */
  readonly taskBudget?: { readonly total: number };
  /** `output_config` of every request: `effort`, and `format` (structured outputs, a JSON schema). */
  readonly outputConfig?: OutputConfig;
  /** E.g. tiny context windows in tests. */
  readonly modelOverrides?: readonly ModelInfo[];
  /** Default true; off and over the hard limit → terminal `blocking_limit`. */
  readonly autoCompactEnabled?: boolean;
  /** R-C7: caps the window the hard limit is measured from (`thresholdsFor`); default the model's. */
  readonly autoCompactWindow?: number;
  /** R-L2: drained between tool turns; the array is consumed (spliced) by the loop. */
  readonly queuedCommands?: QueuedCommand[];
  /** R-L5: yield a `state_snapshot` event at the start of every iteration. */
  readonly recordSnapshots?: boolean;
  /** R-L13: replace any of callModel, autocompact, microcompact, uuid. */
  readonly deps?: Partial<QueryDeps>;
  /** Retry policy of the model client (tests shorten the waits). */
  readonly retry?: RetryOptions;
  /**
   * R-B1: awaited before every model request of this run (its turns and its tool
   * summaries) is sent, before the request's headers deadline starts.
   */
  readonly beforeSend?: BeforeSend;
  /** R-T2: start safe tools while the reply streams (default true); false waits for message_stop. */
  readonly streamingToolExecution?: boolean;
  /** R-L18: summarize each tool batch with this small model; off when undefined. */
  readonly toolUseSummaryModel?: string;
  /**
   * R-C2 cached variant: let the API clear old tool results / thinking through its cache
   * (`context_management`, beta `context-management-2025-06-27`). Each response that reports
   * cleared tokens is followed by a `microcompact_boundary` carrying the API's figures.
   */
  readonly contextEditing?: ContextEditingConfig;
}

/**
 * R-L10: the output cap a request gets unless told otherwise — 8,000, or the model's own cap when
 * that is lower (a models-file entry may say 4,000; the API refuses a larger `max_tokens`).
 */
export function defaultMaxOutputTokens(model: string, modelOverrides?: readonly ModelInfo[]): number {
  return Math.min(DEFAULT_MAX_OUTPUT_TOKENS, getModelInfo(model, modelOverrides).maxOutputTokens);
}

/** R-L13: the immutable config, captured on the first `.next()` and never re-read. */
export function snapshotConfig(params: QueryParams): QueryConfig {
  const model = params.toolUseContext.options.model;
  const info = getModelInfo(model, params.modelOverrides);
  return Object.freeze({
    querySource: params.querySource,
    isSubAgent: params.toolUseContext.agentId !== "main",
    client: params.client,
    maxTurns: params.maxTurns,
    defaultMaxOutputTokens: params.maxOutputTokens ?? defaultMaxOutputTokens(model, params.modelOverrides),
    escalatedMaxOutputTokens: Math.min(ESCALATED_MAX_OUTPUT_TOKENS, info.maxOutputTokens),
    fallbackModels: Object.freeze([...(params.fallbackModels ?? [])]),
    thinking: params.thinking,
    tokenBudget: params.tokenBudget,
    taskBudget: params.taskBudget,
    outputConfig: params.outputConfig,
    autoCompactEnabled: params.autoCompactEnabled ?? true,
    autoCompactWindow: params.autoCompactWindow,
    modelOverrides: Object.freeze([...(params.modelOverrides ?? [])]),
    streamingToolExecution: params.streamingToolExecution ?? true,
    // `haiku` as for the main model (Claude Code's aliases): every loop's summary calls pass here.
    toolUseSummaryModel:
      params.toolUseSummaryModel === undefined ? undefined : resolveModelAlias(params.toolUseSummaryModel),
    recordSnapshots: params.recordSnapshots ?? false,
    retry: params.retry,
    beforeSend: params.beforeSend,
    contextEditing: params.contextEditing,
  });
}
