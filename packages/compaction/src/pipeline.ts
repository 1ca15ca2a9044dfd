import {
  type AutoCompactTracking,
  type ContextPipeline,
  type ContextStageInput,
  type ContextStageResult,
  createSystemMessage,
  estimateMessageTokens,
  getModelInfo,
  type Message,
  type ModelInfo,
  type SystemMessage,
  tokenCountWithEstimation,
} from "@forkloop/loop-core";
import {
  MICROCOMPACT_CLEAR_AT_LEAST_SHARE,
  MICROCOMPACT_KEEP_RECENT,
  MICROCOMPACT_TRIGGER_RATIO,
} from "./api-microcompact.js";
import { applyCollapse, findCollapsibleSpans, planCollapse } from "./collapse.js";
import {
  type CompactOutcome,
  type CompactRunner,
  type CompactTrigger,
  compactConversation,
  type RecentFilesOptions,
} from "./compact-conversation.js";
import type { CompactionEvent } from "./events.js";
import { defaultMessageFactory, type MessageFactory, makeBoundary } from "./message-shape.js";
import { clearToolResults, selectToolResultsToClear } from "./microcompact.js";
import { protectedTailStart } from "./protected-tail.js";
import {
  buildSessionMemoryInstruction,
  type SessionMemoryStore,
  shouldUpdateSessionMemory,
} from "./session-memory.js";
import { planSnip } from "./snip.js";
import { extractSummary } from "./summary.js";
import {
  decideAutoCompact,
  isCompactionFork,
  MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES,
  type Thresholds,
  thresholdsFor,
} from "./thresholds.js";
import { applyToolResultBudget } from "./tool-result-budget.js";

export interface ContextPipelineOptions {
  /** Runs compact and session-memory requests; the orchestrator runs it as a forked sub-agent. */
  readonly runCompact: CompactRunner;
  /** Thresholds come from the model catalog (R-C7); these entries win (e.g. a 24k test window). */
  readonly modelOverrides?: readonly ModelInfo[];
  /** Default true; must match the loop's `autoCompactEnabled` (off: the loop stops at the hard limit). */
  readonly autoCompactEnabled?: boolean;
  /** R-C7: caps the window the auto-compact line is measured from (`thresholdsFor`); default the model's. */
  readonly autoCompactWindow?: number;
  /**
   * Default true. False when the API clears old tool results instead (context editing,
   * `apiMicrocompactEdits`): the R-C2 stage then leaves the history alone.
   */
  readonly clientMicrocompact?: boolean;
  /** Microcompact keeps the newest N tool results (default 5, R-C2). */
  readonly keepRecentToolResults?: number;
  /** Microcompact starts at this share of the auto-compact threshold (default 0.6). */
  readonly microcompactTriggerRatio?: number;
  /** Snip when the history holds more messages than this (default 4,000, R-C1). */
  readonly maxMessages?: number;
  /** R-C5: a notes file per session, refreshed every `sessionMemoryIntervalTokens` of growth. */
  readonly sessionMemory?: SessionMemoryStore;
  /** Default: a quarter of the auto-compact threshold. */
  readonly sessionMemoryIntervalTokens?: number;
  /** Re-attach the most recently touched files after a compaction, within `maxTokens`. */
  readonly recentFiles?: RecentFilesOptions;
  readonly onEvent?: (event: CompactionEvent) => void;
  /** uuid and clock for the messages the pipeline creates (tests pin them). */
  readonly messageFactory?: MessageFactory;
  /** Awaited before every compaction (the agent's PreCompact hooks). */
  readonly onPreCompact?: (event: {
    readonly trigger: CompactTrigger;
    readonly instructions: string | undefined;
  }) => Promise<void>;
  /**
   * Awaited after every successful compaction (the agent's SessionStart `compact` hooks): text it
   * returns joins the history right after the summary, as a meta user message.
   */
  readonly onCompacted?: () => Promise<readonly string[]>;
  /** Awaited after every successful compaction, after `onCompacted` (the agent's PostCompact hooks). */
  readonly onPostCompact?: (event: {
    readonly trigger: CompactTrigger;
    readonly compactSummary: string;
  }) => Promise<void>;
}

export interface CompactionPipeline extends ContextPipeline {
  /** The token count the stages use: R-C8 corrected by what earlier stages freed. */
  tokenCount(messages: readonly Message[]): number;
  /**
   * Manual `/compact [instructions]` on a history between turns — the one path for it: the same
   * compact fork as auto-compaction (R-F3), a model summary with the user's instructions (not
   * session notes), a tail of at most a fifth of the history so a short session has something to
   * replace, and the hard limit as the line to get under (R-C7).
   */
  compactNow(input: ContextStageInput & { readonly instructions?: string }): Promise<CompactOutcome>;
  /** Resolves when no background session-memory update is running (tests, shutdown). */
  settle(): Promise<void>;
}

/** Verbatim tail of an auto compaction, as a share of the auto-compact threshold. */
const TAIL_SHARE = 0.3;
/** Reactive compaction runs over the hard limit: keep a smaller tail so the retry fits. */
const REACTIVE_TAIL_SHARE = 0.15;
/** Manual compaction's tail is also at most this share of the history (a short session compacts too). */
const MANUAL_TAIL_OF_CURRENT = 0.2;
/** Collapse and snip aim this far below their line, so they do not fire again next turn. */
const TARGET_SHARE = 0.85;

/** Implements loop-core's ContextPipeline (§4): R-C0 … R-C6 with the thresholds of R-C7. */
export function createContextPipeline(options: ContextPipelineOptions): CompactionPipeline {
  const factory = options.messageFactory ?? defaultMessageFactory;
  const emit = (event: CompactionEvent): void => options.onEvent?.(event);
  const autoCompactEnabled = options.autoCompactEnabled ?? true;
  const keepRecent = options.keepRecentToolResults ?? MICROCOMPACT_KEEP_RECENT;
  /**
   * R-C8 count corrections. tokenCountWithEstimation trusts the latest response's usage for
   * everything before it; once a stage rewrote that part (snip, microcompact, collapse, compact)
   * the usage is stale until the next response. The corrected count is remembered for the exact
   * array a stage returned: the loop hands that array to the next stage and, on a withheld
   * prompt-too-long, to drainCollapse/reactiveCompact; any later history carries a new response.
   */
  const corrected = new WeakMap<readonly Message[], number>();
  let sessionMemoryTask: Promise<void> | null = null;

  function tokenCount(messages: readonly Message[]): number {
    return corrected.get(messages) ?? tokenCountWithEstimation(messages);
  }

  function recordCount(messages: readonly Message[], count: number): void {
    corrected.set(messages, count);
  }

  function thresholds(model: string): Thresholds {
    return thresholdsFor(getModelInfo(model, options.modelOverrides), options.autoCompactWindow);
  }

  function exempt(input: ContextStageInput): boolean {
    // A compact or session-memory fork must send the parent's prefix byte for byte (R-F3, R-L3).
    return isCompactionFork(input.querySource);
  }

  function autoCompactUsable(tracking: AutoCompactTracking): boolean {
    return autoCompactEnabled && tracking.consecutiveFailures < MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES;
  }

  function unchanged(input: ContextStageInput): ContextStageResult {
    return { messages: input.messages, boundaries: [], tokensFreed: 0, tracking: input.tracking };
  }

  /** Records the new count after a stage and builds its result. */
  function rewritten(
    input: ContextStageInput,
    before: number,
    messages: readonly Message[],
    tokensFreed: number,
    boundaries: readonly SystemMessage[],
  ): ContextStageResult {
    recordCount(messages, Math.max(0, before - tokensFreed));
    return { messages, boundaries, tokensFreed, tracking: input.tracking };
  }

  function budgetAndSnip(input: ContextStageInput): ContextStageResult {
    if (exempt(input)) return unchanged(input);
    const before = tokenCount(input.messages);
    const budget = applyToolResultBudget(input.messages, input.tools);
    let messages = budget.messages;
    let freed = changedTokens(input.messages, messages);
    if (budget.cappedToolUseIds.length > 0) {
      emit({
        type: "tool_results_capped",
        toolUseIds: budget.cappedToolUseIds,
        charsRemoved: budget.charsRemoved,
      });
    }
    const limits = thresholds(input.model);
    const maxMessages = options.maxMessages ?? 4_000;
    // With a working auto-compact, tokens are its job (a summary keeps more than a cut). Snip
    // guards the hard limit only once the breaker is open (R-C1, R-L11). With auto-compact off
    // the SPEC'd outcome at the hard limit is the loop's `blocking_limit` terminal (R-L6).
    const snipOnTokens = autoCompactEnabled && !autoCompactUsable(input.tracking);
    const tokens = before - freed;
    const snipTrigger = snipOnTokens ? limits.blockingLimit : Number.POSITIVE_INFINITY;
    // The common pass ends here: finding the tail walks the history, so only when snip may run.
    const plan =
      tokens >= snipTrigger || messages.length > maxMessages
        ? planSnip(messages, {
            tokens,
            triggerTokens: snipTrigger,
            targetTokens: Math.floor(limits.autoCompact * TARGET_SHARE),
            maxMessages,
            targetMessages: Math.floor(maxMessages * TARGET_SHARE),
            tailStart: protectedTailStart(messages, Math.floor(limits.autoCompact * TAIL_SHARE)),
          })
        : null;
    const boundaries: SystemMessage[] = [];
    if (plan) {
      const dropped = plan.to - plan.from;
      const boundary = makeBoundary(
        factory,
        "snip_boundary",
        `Snipped ${dropped} old messages (~${plan.tokensFreed} tokens) to stay within the context window`,
        messages[plan.pinnedIndex]?.uuid ?? null,
      );
      messages = [...messages.slice(0, plan.from), ...messages.slice(plan.to)];
      freed += plan.tokensFreed;
      boundaries.push(boundary);
      emit({ type: "snipped", messages: dropped, tokensFreed: plan.tokensFreed });
    }
    if (messages === input.messages) return unchanged(input);
    return rewritten(input, before, messages, freed, boundaries);
  }

  async function microcompact(input: ContextStageInput): Promise<ContextStageResult> {
    if (exempt(input) || options.clientMicrocompact === false) return unchanged(input);
    const tokens = tokenCount(input.messages);
    const limits = thresholds(input.model);
    const trigger = limits.autoCompact * (options.microcompactTriggerRatio ?? MICROCOMPACT_TRIGGER_RATIO);
    // At the auto-compact line the whole history is about to be summarised: clearing results now
    // would only hide detail from the summary and change the prefix the compact request reads
    // from the cache (R-F3).
    if (tokens < trigger || (tokens >= limits.autoCompact && autoCompactUsable(input.tracking))) {
      return unchanged(input);
    }
    const candidates = selectToolResultsToClear(input.messages, { keepRecent });
    const total = candidates.reduce((sum, candidate) => sum + candidate.tokens, 0);
    if (total < limits.autoCompact * MICROCOMPACT_CLEAR_AT_LEAST_SHARE) return unchanged(input);
    const ids = candidates.map((candidate) => candidate.toolUseId);
    const messages = clearToolResults(input.messages, new Set(ids));
    const freed = changedTokens(input.messages, messages);
    const boundary = makeBoundary(
      factory,
      "microcompact_boundary",
      `Cleared ${ids.length} old tool results (~${freed} tokens)`,
      null,
    );
    emit({ type: "microcompacted", toolUseIds: ids, tokensFreed: freed });
    return rewritten(input, tokens, messages, freed, [boundary]);
  }

  async function collapse(input: ContextStageInput): Promise<ContextStageResult> {
    if (exempt(input)) return unchanged(input);
    const tokens = tokenCount(input.messages);
    const limits = thresholds(input.model);
    if (tokens < limits.autoCompact) return unchanged(input);
    const spans = findCollapsibleSpans(
      input.messages,
      protectedTailStart(input.messages, Math.floor(limits.autoCompact * TAIL_SHARE)),
    );
    // R-C3 runs before auto-compact so that auto-compact is a no-op when collapse suffices; when it
    // does not, the spans stay staged for drainCollapse and the summary sees the full detail.
    const plan = planCollapse(spans, tokens - Math.floor(limits.autoCompact * TARGET_SHARE));
    const chosen = plan ?? (autoCompactUsable(input.tracking) ? null : spans);
    if (!chosen || chosen.length === 0) return unchanged(input);
    const messages = applyCollapse(input.messages, chosen, factory);
    const freed = chosen.reduce((sum, span) => sum + span.tokensFreed, 0);
    emit({ type: "collapsed", spans: chosen.length, tokensFreed: freed, drained: false });
    return rewritten(input, tokens, messages, freed, []);
  }

  async function drainCollapse(input: ContextStageInput): Promise<ContextStageResult | null> {
    if (exempt(input)) return null;
    const tokens = tokenCount(input.messages);
    const spans = findCollapsibleSpans(input.messages, protectedTailStart(input.messages, 0));
    if (spans.length === 0) return null;
    const messages = applyCollapse(input.messages, spans, factory);
    const freed = spans.reduce((sum, span) => sum + span.tokensFreed, 0);
    emit({ type: "collapsed", spans: spans.length, tokensFreed: freed, drained: true });
    return rewritten(input, tokens, messages, freed, []);
  }

  /** Tokens of the verbatim tail each trigger keeps. */
  function tailTokens(trigger: CompactTrigger, limits: Thresholds, tokens: number): number {
    switch (trigger) {
      case "auto":
        return Math.floor(limits.autoCompact * TAIL_SHARE);
      case "reactive":
        return Math.floor(limits.autoCompact * REACTIVE_TAIL_SHARE);
      case "manual":
        return Math.floor(Math.min(limits.autoCompact * TAIL_SHARE, tokens * MANUAL_TAIL_OF_CURRENT));
    }
  }

  async function compact(
    input: ContextStageInput,
    trigger: CompactTrigger,
    instructions?: string,
  ): Promise<{ readonly result: ContextStageResult; readonly outcome: CompactOutcome }> {
    const tokens = tokenCount(input.messages);
    const limits = thresholds(input.model);
    emit({ type: "compact_started", trigger, preTokens: tokens });
    await options.onPreCompact?.({ trigger, instructions });
    if (sessionMemoryTask) await sessionMemoryTask;
    // A manual compaction is a summary the user asked for now, with their instructions.
    const notes = options.sessionMemory && trigger !== "manual" ? await options.sessionMemory.load() : null;
    const outcome = await compactConversation({
      messages: input.messages,
      cacheSafeParams: input.cacheSafeParams,
      runCompact: options.runCompact,
      trigger,
      signal: input.signal,
      tailTokens: tailTokens(trigger, limits, tokens),
      // Auto must get under its own line, or it fires again next turn; reactive and manual must at
      // least leave the hard limit behind. Short of that the compaction failed (R-C4, R-L11).
      maxPostTokens: trigger === "auto" ? limits.autoCompact : limits.blockingLimit,
      preTokens: tokens,
      sessionNotes: notes,
      targetTokens: Math.floor(limits.autoCompact * TARGET_SHARE),
      factory,
      ...(instructions === undefined ? {} : { instructions }),
      ...(options.recentFiles === undefined ? {} : { recentFiles: options.recentFiles }),
    });
    if (!outcome.ok) {
      const consecutiveFailures = input.tracking.consecutiveFailures + 1;
      emit({ type: "compact_failed", trigger, error: outcome.error, consecutiveFailures });
      return {
        result: { ...unchanged(input), tracking: { ...input.tracking, consecutiveFailures } },
        outcome,
      };
    }
    emit({
      type: "compact_succeeded",
      trigger,
      source: outcome.source,
      preTokens: outcome.preTokens,
      postTokens: outcome.postTokens,
      rejections: outcome.rejections,
    });
    // compactConversation only succeeds under maxPostTokens, so a success resets the breaker.
    const tracking: AutoCompactTracking = {
      compacted: true,
      turnCounter: 0,
      turnId: outcome.boundary.uuid,
      consecutiveFailures: 0,
    };
    const compacted = await withCompactedContext(outcome);
    // Claude Code's order: SessionStart `compact` (above), then PostCompact.
    await options.onPostCompact?.({ trigger, compactSummary: outcome.compactSummary });
    recordCount(compacted.messages, compacted.postTokens);
    if (notes && options.sessionMemory) {
      await options.sessionMemory.save({ ...notes, tokensAtUpdate: compacted.postTokens });
    }
    return {
      result: {
        messages: compacted.messages,
        boundaries: [compacted.boundary],
        tokensFreed: Math.max(0, tokens - compacted.postTokens),
        tracking,
      },
      outcome: compacted,
    };
  }

  /**
   * The compacted history with what the SessionStart `compact` hooks said, after the summary, as
   * text for the model (`model_context`): a model that takes system messages gets it as one after
   * the next prompt, as Claude Code 2.1.332 sends it (claude-cli scenario hooks-compact-context),
   * another within the summary's user turn (toApiMessages).
   */
  async function withCompactedContext(
    outcome: Extract<CompactOutcome, { ok: true }>,
  ): Promise<Extract<CompactOutcome, { ok: true }>> {
    const context = (await options.onCompacted?.()) ?? [];
    if (context.length === 0) return outcome;
    const [boundary, summary, ...tail] = outcome.messages;
    const message = createSystemMessage(context.join("\n\n"), "model_context", {
      uuid: factory.uuid(),
      parentUuid: summary?.uuid ?? null,
    });
    return {
      ...outcome,
      messages: [boundary!, summary!, message, ...tail],
      postTokens: outcome.postTokens + estimateMessageTokens(message),
    };
  }

  function maybeUpdateSessionMemory(input: ContextStageInput, tokens: number, limits: Thresholds): void {
    const store = options.sessionMemory;
    const params = input.cacheSafeParams;
    const last = input.messages.at(-1);
    if (!store || !params || !last || sessionMemoryTask) return;
    const interval = options.sessionMemoryIntervalTokens ?? Math.floor(limits.autoCompact / 4);
    sessionMemoryTask = (async () => {
      try {
        const notes = await store.load();
        if (!shouldUpdateSessionMemory({ tokens, notes, minTokens: interval, intervalTokens: interval }))
          return;
        // Background fork after the turn: the same prefix as the parent, one instruction (R-F3).
        const result = await options.runCompact({
          cacheSafeParams: { ...params, forkContextMessages: input.messages },
          instruction: buildSessionMemoryInstruction(notes?.text ?? null),
          signal: input.signal,
          querySource: "session_memory",
        });
        if (!result.ok) {
          emit({ type: "session_memory_failed", error: result.error });
          return;
        }
        await store.save({
          text: extractSummary(result.summary),
          coveredUuid: last.uuid,
          tokensAtUpdate: tokens,
        });
        emit({ type: "session_memory_updated", tokens, coveredUuid: last.uuid });
      } catch (error) {
        emit({
          type: "session_memory_failed",
          error: error instanceof Error ? error.message : String(error),
        });
      } finally {
        sessionMemoryTask = null;
      }
    })();
  }

  async function autocompact(input: ContextStageInput): Promise<ContextStageResult> {
    const tokens = tokenCount(input.messages);
    const limits = thresholds(input.model);
    const decision = decideAutoCompact({
      tokens,
      model: getModelInfo(input.model, options.modelOverrides),
      autoCompactWindow: options.autoCompactWindow,
      tracking: input.tracking,
      enabled: autoCompactEnabled,
      querySource: input.querySource,
    });
    switch (decision.type) {
      case "exempt_source":
      case "disabled":
        return unchanged(input);
      case "below_threshold":
        maybeUpdateSessionMemory(input, tokens, limits);
        return unchanged(input);
      case "breaker_open":
        emit({ type: "breaker_open", consecutiveFailures: decision.consecutiveFailures });
        return unchanged(input);
      case "compact":
        return (await compact(input, "auto")).result;
      default: {
        const exhaustive: never = decision;
        return exhaustive;
      }
    }
  }

  async function reactiveCompact(input: ContextStageInput): Promise<ContextStageResult | null> {
    if (exempt(input)) return null;
    // R-C6: runs even with auto-compact off or its breaker open; the loop holds the one-shot guard.
    const { result, outcome } = await compact(input, "reactive");
    return outcome.ok ? result : null;
  }

  return {
    budgetAndSnip,
    microcompact,
    collapse,
    autocompact,
    drainCollapse,
    reactiveCompact,
    tokenCount,
    async compactNow(input) {
      return (await compact(input, "manual", input.instructions)).outcome;
    },
    async settle() {
      while (sessionMemoryTask) await sessionMemoryTask;
    },
  };
}

/** Estimated tokens removed between two same-length histories (unchanged messages are shared). */
function changedTokens(before: readonly Message[], after: readonly Message[]): number {
  if (before === after) return 0;
  let freed = 0;
  const length = Math.max(before.length, after.length);
  for (let index = 0; index < length; index++) {
    const old = before[index];
    const next = after[index];
    if (old === next) continue;
    freed += (old ? estimateMessageTokens(old) : 0) - (next ? estimateMessageTokens(next) : 0);
  }
  return freed;
}
