import { buildCacheSafeParams, type CacheSafeParams } from "./cache-safe-params.js";
import { type ContextPipeline, passthroughContextPipeline } from "./context-pipeline.js";
import type { LoopHooks } from "./hooks.js";
import type { LoopEvent } from "./loop-events.js";
import { freshTurnState, type LoopState, type QueryConfig, type QueuedCommand } from "./loop-state.js";
import type { Message } from "./messages.js";
import type { CanUseTool } from "./permissions.js";
import { productionDeps, type QueryDeps } from "./query-deps.js";
import { type QueryParams, snapshotConfig } from "./query-params.js";
import type { Terminal, TerminalReason } from "./terminal.js";
import { INITIAL_BUDGET_TRACKER } from "./token-budget.js";
import type { Tool } from "./tool.js";
import { sumUsage, UsageCounter } from "./usage-counter.js";

/**
 * What one `query()` run keeps beside its LoopState (R-L13): the immutable config, the injected
 * deps, the inputs no iteration changes, and the usage counters (bookkeeping, not state).
 */
export interface LoopRun {
  readonly config: QueryConfig;
  readonly pipeline: ContextPipeline;
  readonly deps: QueryDeps;
  readonly canUseTool: CanUseTool;
  readonly hooks: LoopHooks | undefined;
  readonly systemPrompt: QueryParams["systemPrompt"];
  /** R-L2: the one live input, commands queued while the loop runs; `consumed` collects them. */
  readonly queuedCommands: QueuedCommand[] | undefined;
  readonly consumed: QueuedCommand[];
  readonly toolDefinitions: QueryParams["toolDefinitions"];
  readonly usage: UsageCounter;
  /** R-L18: summary requests are paid for too; the totals include them once they have settled. */
  readonly summaryUsage: UsageCounter;
}

const allowAll: CanUseTool = async () => ({ behavior: "allow" });

/** R-L1/R-L13: everything set up on the first `.next()`, captured once. */
export function startRun(params: QueryParams, consumed: QueuedCommand[]): LoopRun {
  const pipeline = params.contextPipeline ?? passthroughContextPipeline;
  return {
    config: snapshotConfig(params),
    pipeline,
    deps: { ...productionDeps(pipeline), ...params.deps },
    canUseTool: params.canUseTool ?? allowAll,
    hooks: params.hooks,
    systemPrompt: params.systemPrompt,
    queuedCommands: params.queuedCommands,
    consumed,
    toolDefinitions: params.toolDefinitions,
    usage: new UsageCounter(),
    summaryUsage: new UsageCounter(),
  };
}

/** R-L4: the state of the first iteration. */
export function initialState(params: QueryParams, run: LoopRun): LoopState {
  return {
    messages: params.messages,
    toolUseContext: params.toolUseContext,
    autoCompactTracking: {
      compacted: false,
      turnCounter: 0,
      turnId: run.deps.uuid(),
      consecutiveFailures: 0,
    },
    ...freshTurnState(),
    turnCount: 1,
    budgetTracker: INITIAL_BUDGET_TRACKER,
    transition: undefined,
  };
}

/**
 * R-F3: the prefix of the requests an iteration sends, built once at its top through the one
 * CacheSafeParams builder: its compaction forks from it, and each attempt sends these bytes
 * (with its own model and messages) and announces them on `request_start`.
 */
export function requestPrefix(
  run: LoopRun,
  request: {
    readonly model: string;
    readonly tools: readonly Tool[];
    readonly maxOutputTokens: number;
    readonly messages: readonly Message[];
  },
): CacheSafeParams {
  // Field by field, not a spread of `request`: the spread showed in the loop's CPU profile (loop
  // bench), once per iteration.
  return buildCacheSafeParams({
    model: request.model,
    tools: request.tools,
    maxOutputTokens: request.maxOutputTokens,
    messages: request.messages,
    systemPrompt: run.systemPrompt,
    toolDefinitions: run.toolDefinitions,
    thinking: run.config.thinking,
    effort: run.config.outputConfig?.effort ?? undefined,
  });
}

/** How an iteration's phase ended: the state of the next iteration, or the loop's end. */
export type PhaseOutcome =
  | { readonly next: LoopState }
  | {
      readonly reason: TerminalReason;
      readonly messages: readonly Message[];
      readonly error?: Terminal["error"];
      /** R-L19: max_turns counts the model call it refused. */
      readonly turnCount?: number;
    };

/** The Terminal of a run; waits for the R-L18 summary in flight so its usage is counted. */
export async function finish(
  run: LoopRun,
  state: LoopState,
  end: Exclude<PhaseOutcome, { next: LoopState }>,
): Promise<Terminal> {
  await state.pendingToolUseSummary;
  const { summaryUsage } = run;
  return {
    reason: end.reason,
    turnCount: end.turnCount ?? state.turnCount,
    messages: end.messages,
    usage: sumUsage(run.usage.totals(), summaryUsage.totals()),
    ...(summaryUsage.apiCalls > 0 ? { toolUseSummaryUsage: summaryUsage.totals() } : {}),
    ...(end.error ? { error: end.error } : {}),
  };
}

/** R-L5: the per-iteration snapshot, when `recordSnapshots` is on. */
export function stateSnapshot(state: LoopState): LoopEvent {
  return {
    type: "state_snapshot",
    turnCount: state.turnCount,
    transition: state.transition?.reason,
    messageCount: state.messages.length,
    model: state.toolUseContext.options.model,
    maxOutputTokensOverride: state.maxOutputTokensOverride,
    maxOutputTokensRecoveryCount: state.maxOutputTokensRecoveryCount,
    hasAttemptedReactiveCompact: Object.values(state.reactiveCompactAttempted).includes(true),
    reactiveCompactAttempted: state.reactiveCompactAttempted,
    stopHookActive: state.stopHookActive,
    autoCompactFailures: state.autoCompactTracking.consecutiveFailures,
  };
}
