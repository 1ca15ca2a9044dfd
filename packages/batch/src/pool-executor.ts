import { join } from "node:path";
import {
  apiOutputSchema,
  type CacheSafeParams,
  costUsd,
  getModelInfo,
  type LoopHooks,
  sumUsage,
  type Tool,
  usageTotalsOf,
  ZERO_USAGE_TOTALS,
} from "@forkloop/loop-core";
import {
  type AgentPool,
  type AgentProfile,
  buildSubAgentTask,
  detachedParentTools,
  type ModelTransport,
  parentToolAnnotations,
  type RequestGate,
  responseStarted,
  type SubAgentEvent,
  type SubAgentResult,
  type SubAgentTask,
  TRANSCRIPT_EXTENSION,
} from "@forkloop/orchestrator";
import type { ItemExecution, ItemExecutor, ItemOutcome } from "./batch-runner.js";
import { startItemSpan } from "./batch-telemetry.js";
import { workspaceNote } from "./item-isolation.js";
import type { ItemSideUsage } from "./item-side-usage.js";
import type { Claim, ItemResult } from "./job-backend.js";
import { type StructuredCheck, structuredOutputCheck } from "./structured-output.js";

/** An item attempt's transcript file name in the batch's `transcripts/` (replay and report read it). */
export function itemTranscriptName(itemId: string, attempt: number): string {
  return transcriptNameOf(`${itemId}-${attempt}`);
}

function transcriptNameOf(itemAttempt: string): string {
  return `${itemAttempt}${TRANSCRIPT_EXTENSION}`;
}

/** What every item of a batch shares: the cache-safe prefix and the sub-agent settings. */
export interface BatchAgentSettings {
  readonly cwd: string;
  readonly cacheSafeParams: CacheSafeParams;
  readonly toolNames: readonly string[];
  /**
   * Every item's profile: its permission mode and rules, its Bash (the batch's sandbox and
   * settings `env`, R-S6, R-S4), its turn limit, fallbacks, the models file (`FORKLOOP_MODELS`:
   * context windows and prices), the summary model and context editing (R-L18, R-C2).
   */
  readonly profile: AgentProfile;
  /** Where each item's sub-agent transcript goes (`forkloop replay <file>` reads it). */
  readonly transcriptsDir?: string;
  /**
   * The settings files' hooks: the pool runs them in this process for every item (over comlink) —
   * SessionStart and UserPromptSubmit as the item starts, PreToolUse/PostToolUse for its tool
   * calls, PreCompact before it compacts, Stop when it stops (R-X4). Build them with
   * `sessionOf: batchItemSession(transcriptsDir)`: each item is a session of its own.
   */
  readonly hooks?: LoopHooks;
  /**
   * Called — and awaited, before the tool runs — when an item's sub-agent is about to
   * run a tool that changes things, so the journal knows which interrupted items may repeat a
   * side effect on resume. `isMutating` says which calls count (a tool's `isReadOnly`).
   */
  readonly sideEffects?: {
    isMutating(toolName: string, input: Record<string, unknown>): boolean;
    record(claim: Claim, tool: string): Promise<void>;
  };
  /**
   * The batch's MCP tools (R-M1): connected once in this process for every item; an item's
   * call comes back over comlink and runs here, and the worker's proxies keep their annotations.
   */
  readonly parentTools?: readonly Tool[];
  /**
   * R-T6: the requests those parent tools send for an item (its WebSearch), by its agent id;
   * they count in the item's usage and cost, live and in its result.
   */
  readonly sideUsage?: ItemSideUsage;
  /**
   * True for a failure every item would repeat (a bad key, an unknown model): when the warming
   * item fails so, the rest of its wave is held back unsent and left pending.
   */
  readonly failsEveryItem?: (error: { readonly code: string; readonly message: string }) => boolean;
  /** `--rpm` (R-B1): awaited before every model request of every item. */
  readonly requestSlot?: RequestGate;
  /** R-B8 (`--api batches`): carries every item's model requests as Message Batch entries. */
  readonly modelTransport?: ModelTransport;
  /**
   * R-B6 `--json-schema`: every item's requests carry it as `output_config.format`, and its final
   * answer must parse and match it (`structuredOutput`), else the item fails with the reason.
   */
  readonly outputSchema?: Record<string, unknown>;
}

/**
 * Runs batch items as sub-agents in the orchestrator's worker pool (R-F2). Every item's request
 * starts with the same cache-safe prefix (R-F3: tools + system), and the first wave is sent
 * through `runAll` with warming (R-F4), so N items pay one cache write and N−1 reads.
 */
export function createPoolExecutor(
  pool: AgentPool,
  settings: BatchAgentSettings,
  onEvent?: (claim: Claim, event: SubAgentEvent) => void,
): ItemExecutor {
  const { profile } = settings;
  const modelInfo = getModelInfo(settings.cacheSafeParams.model, profile.modelOverrides);
  const parentTools = settings.parentTools ?? [];
  const toolAnnotations = parentToolAnnotations(parentTools, settings.cacheSafeParams);
  const parentCalls =
    parentTools.length === 0
      ? undefined
      : detachedParentTools(parentTools, {
          cwd: settings.cwd,
          model: settings.cacheSafeParams.model,
          permissionMode: profile.permissionMode,
        });
  const structured =
    settings.outputSchema === undefined ? undefined : structuredOutputCheck(settings.outputSchema);
  if (structured !== undefined && !structured.ok) throw new Error(`--json-schema: ${structured.error}`);
  const checkAnswer = structured?.ok ? structured.check : undefined;
  // The request carries the API's form of the schema; the answer is checked against the user's.
  const outputFormat =
    settings.outputSchema === undefined
      ? undefined
      : { type: "json_schema" as const, schema: apiOutputSchema(settings.outputSchema) };
  const toTask = (claim: Claim): SubAgentTask =>
    buildSubAgentTask({
      id: `${ITEM_PREFIX}${claim.item.id}-${claim.attempt}`,
      // R-B2: an isolated item works in its copy — its tools, permission rules and sandbox take
      // that as the workspace, and so do its own sub-agents (they inherit the cwd).
      cwd: claim.workspace ?? settings.cwd,
      // Like one `claude -p` per item: SessionStart, UserPromptSubmit and Stop are the item's own.
      startsSession: true,
      transcriptPath:
        settings.transcriptsDir === undefined
          ? undefined
          : join(settings.transcriptsDir, itemTranscriptName(claim.item.id, claim.attempt)),
      cacheSafeParams: settings.cacheSafeParams,
      // The shared prefix names the project; the item's first message names its copy.
      promptMessages: [
        {
          role: "user",
          content:
            claim.workspace === undefined
              ? claim.item.prompt
              : `${workspaceNote(settings.cwd, claim.workspace)}${claim.item.prompt}`,
        },
      ],
      querySource: "batch",
      ...(outputFormat === undefined ? {} : { outputFormat }),
      toolNames: [...settings.toolNames],
      profile,
      toolAnnotations,
    });
  return {
    startAll(claims, warm): ItemExecution[] {
      // R-V5: each item's span; its trace context goes with the task, so the fork hangs from it.
      const spans = claims.map(startItemSpan);
      const tasks = claims.map((claim, index) => {
        const task = toTask(claim);
        const traceparent = spans[index]?.traceparent;
        return traceparent === undefined ? task : { ...task, traceparent };
      });
      const byTaskId = new Map(tasks.map((task, index) => [task.id, claims[index]!]));
      const live = new Map(tasks.map((task) => [task.id, { usage: ZERO_USAGE_TOTALS, costUsd: 0 }]));
      const retries = new Map<string, number>();
      // R-F4: each item's first response, which puts the batch's prefix in the cache.
      const responded = new Map<string, () => void>();
      const firstResponses = tasks.map(
        (task) => new Promise<void>((resolve) => responded.set(task.id, resolve)),
      );
      const hooks = withSideEffectHook(settings, (agentId) => byTaskId.get(agentId));
      const callbacks = {
        ...(hooks === undefined ? {} : { hooks }),
        ...(parentCalls === undefined ? {} : { callTool: parentCalls.callTool }),
        ...(settings.requestSlot === undefined ? {} : { requestSlot: settings.requestSlot }),
        ...(settings.modelTransport === undefined ? {} : { modelTransport: settings.modelTransport }),
        onEvent: (event: SubAgentEvent) => {
          const claim = byTaskId.get(event.agentId);
          if (!claim) return;
          const sofar = live.get(event.agentId);
          // R-R1: retried requests (dropped streams, 529s …) are counted for the report.
          if (event.type === "api_retry") retries.set(event.agentId, (retries.get(event.agentId) ?? 0) + 1);
          if (responseStarted(event)) responded.get(event.agentId)?.();
          if (event.type === "usage" && event.phase === "end" && sofar) {
            live.set(event.agentId, {
              // One response's usage: one API call.
              usage: sumUsage(sofar.usage, usageTotalsOf([event.usage])),
              // Priced at the primary model: a live estimate; the settled result carries the real cost.
              costUsd: sofar.costUsd + costUsd(modelInfo, event.usage),
            });
          }
          onEvent?.(claim, event);
        },
      };
      let heldBack = false;
      const handles = pool.runAll(tasks, callbacks, {
        warm,
        releaseAfterFailure: (first) => {
          heldBack = first.error !== undefined && settings.failsEveryItem?.(first.error) === true;
          return !heldBack;
        },
      });
      return handles.map((handle, index) => {
        let cancelledByUs = false;
        const side = settings.sideUsage;
        return {
          result: handle.result.then((settled) => {
            const result = side === undefined ? settled : { ...settled, ...side.with(handle.id, settled) };
            side?.drop(handle.id);
            const outcome = withStructuredOutput(
              toOutcome(result, cancelledByUs || (index > 0 && heldBack), retries.get(handle.id) ?? 0),
              checkAnswer,
            );
            spans[index]?.end(outcome);
            return outcome;
          }),
          responseStarted: firstResponses[index]!,
          cancel(reason: string) {
            cancelledByUs = true;
            handle.cancel(reason);
          },
          usageSoFar: () => {
            const sofar = live.get(handle.id) ?? { usage: ZERO_USAGE_TOTALS, costUsd: 0 };
            return side === undefined ? sofar : side.with(handle.id, sofar);
          },
        };
      });
    },
  };
}

/** A batch item's agent id is `item-<item id>-<attempt>`; its transcript `<item id>-<attempt>.fltr`. */
const ITEM_PREFIX = "item-";

/**
 * The settings hooks' `sessionOf` for a batch: each item's agent is the top of a session of its
 * own (its hooks report its id as `session_id` and its transcript; its stop is a Stop).
 */
export function batchItemSession(
  transcriptsDir: string | undefined,
): (agentId: string) => { sessionId: string; transcriptPath?: string } | undefined {
  return (agentId) => {
    if (!agentId.startsWith(ITEM_PREFIX)) return undefined;
    const itemAttempt = agentId.slice(ITEM_PREFIX.length);
    return transcriptsDir === undefined
      ? { sessionId: agentId }
      : { sessionId: agentId, transcriptPath: join(transcriptsDir, transcriptNameOf(itemAttempt)) };
  };
}

/** A sub-agent's result as a batch outcome: only a `completed` terminal is a success. */
function toOutcome(result: SubAgentResult, cancelledByUs: boolean, apiRetries = 0): ItemOutcome {
  if (cancelledByUs && (result.status === "cancelled" || result.terminal?.startsWith("aborted_"))) {
    return { ok: "cancelled" };
  }
  const itemResult: ItemResult = {
    turns: result.turns,
    usage: result.usage,
    costUsd: result.costUsd,
    durationMs: result.durationMs,
    text: result.text,
    ...(result.terminal === undefined ? {} : { terminal: result.terminal }),
    ...(result.compactions === undefined ? {} : { compactions: result.compactions }),
    ...(apiRetries > 0 ? { apiRetries } : {}),
  };
  if (result.status === "completed" && result.terminal === "completed")
    return { ok: true, result: itemResult };
  const error = result.error ?? {
    code: result.terminal ?? result.status,
    message: `the sub-agent ended with ${result.terminal ?? result.status}`,
  };
  return { ok: false, error: { code: error.code, message: error.message }, result: itemResult };
}

/** R-B6: a succeeded item's answer checked against `--json-schema`; one that does not match fails. */
function withStructuredOutput(
  outcome: ItemOutcome,
  check: ((text: string) => StructuredCheck) | undefined,
): ItemOutcome {
  if (check === undefined || outcome.ok !== true) return outcome;
  const checked = check(outcome.result.text);
  if (checked.ok) return { ok: true, result: { ...outcome.result, structuredOutput: checked.value } };
  return { ok: false, error: { code: "structured_output", message: checked.reason }, result: outcome.result };
}

/**
 * The settings' hooks plus, when side effects are tracked, a PreToolUse hook that records a
 * mutating call before it runs (the worker awaits PreToolUse hooks over comlink). It has no
 * opinion on the call itself.
 */
function withSideEffectHook(
  settings: BatchAgentSettings,
  claimOf: (agentId: string) => Claim | undefined,
): LoopHooks | undefined {
  const tracked = settings.sideEffects;
  if (!tracked) return settings.hooks;
  const record: NonNullable<LoopHooks["preToolUse"]>[number] = async ({ toolName, toolInput, context }) => {
    const claim = claimOf(context.agentId);
    if (claim && tracked.isMutating(toolName, toolInput)) await tracked.record(claim, toolName);
    return {};
  };
  return { ...settings.hooks, preToolUse: [record, ...(settings.hooks?.preToolUse ?? [])] };
}
