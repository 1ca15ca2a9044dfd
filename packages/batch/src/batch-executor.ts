import { availableParallelism } from "node:os";
import type { Tool } from "@forkloop/loop-core";
import {
  type AgentPool,
  agentProfile,
  createAgentPool,
  endpointWebSearcher,
  type ModelTransport,
  type RequestGate,
  type SharedClock,
  type SubAgentBashOptions,
  type SubAgentEvent,
  withWebSearcher,
} from "@forkloop/orchestrator";
import {
  bashToolOptions,
  type ModelSource,
  mergeRules,
  offeredMcpTools,
  type RunEnvironment,
  selectTools,
  settingsHooks,
} from "@forkloop/sdk";
import { batchPrefix } from "./batch-prefix.js";
import type { ItemExecutor } from "./batch-runner.js";
import type { BatchSpec } from "./batch-store.js";
import { itemSideUsage } from "./item-side-usage.js";
import type { Claim } from "./job-backend.js";
import { batchItemSession, createPoolExecutor } from "./pool-executor.js";

type Settings = RunEnvironment["settings"];

/**
 * The sub-agents of one batch on this host: its spec's tools and rules merged with this host's
 * settings files, the session's system prompt for `cwd`, and the one cache-safe prefix (R-F3)
 * every item's first request starts with. `forkloop worker` builds one per batch it serves.
 */
export async function createBatchExecutor(options: {
  readonly spec: BatchSpec;
  readonly cwd: string;
  readonly settings: Settings;
  readonly source: ModelSource;
  readonly pool: AgentPool;
  /** Every item's Bash: this host's sandbox (R-S6) and its settings' env. */
  readonly bash: SubAgentBashOptions;
  /** The run's HOME: the items' permission checks judge the user's own files by it (R-S10). */
  readonly home?: string | undefined;
  readonly transcriptsDir: string;
  /** The batch's MCP tools (R-M1), connected once in this process; items call them over comlink. */
  readonly mcpTools?: readonly Tool[];
  /** Records that an item ran a mutating tool (a resume says "may have run twice"). */
  readonly recordSideEffect?: (claim: Claim, tool: string) => Promise<void>;
  /** True for a failure every item would repeat: the warming item's wave is held back. */
  readonly failsEveryItem?: (error: { readonly code: string; readonly message: string }) => boolean;
  readonly onNotice: (line: string) => void;
  readonly onEvent?: (claim: Claim, event: SubAgentEvent) => void;
  /** `--rpm` (R-B1): the batch's request limiter, awaited before every model request. */
  readonly requestSlot?: RequestGate;
  /** R-B8 (`--api batches`): every item's model requests as Message Batch entries. */
  readonly modelTransport?: ModelTransport;
}): Promise<ItemExecutor> {
  const { spec, cwd, settings, source } = options;
  // The batch's thinking, summary model and context editing, as batch.json keeps them.
  const loop = spec.loop ?? {};
  const rules = mergeRules(settings, { allow: spec.allowedTools, deny: spec.disallowedTools });
  // The batch's deny rules over this host's settings remove MCP tools too (a worker's servers
  // are shared by every batch it serves, each with its own rules).
  const mcpTools = offeredMcpTools(options.mcpTools ?? [], rules.deny);
  const builtins = selectTools(rules.deny, bashToolOptions(options.bash));
  const tools = [...builtins, ...mcpTools];
  // R-T6: an item's WebSearch runs here (a worker has no searcher), through the batch's endpoint;
  // its request counts in the calling item's usage and cost. Left out when a deny rule removed it.
  const sideUsage = itemSideUsage(source.modelOverrides);
  const search = builtins.some((tool) => tool.name === "WebSearch")
    ? withWebSearcher(
        builtins.filter((tool) => tool.name === "WebSearch"),
        endpointWebSearcher(source.endpoint, (model, usage, agentId) => sideUsage.add(agentId, model, usage)),
        options.bash.sandbox,
      )
    : [];
  const parentTools = [...search, ...mcpTools];
  // R-F3: one prefix (tools → system) for every item, so each item's first request reads it.
  const cacheSafeParams = await batchPrefix(spec, tools, source.modelOverrides, cwd, options.onNotice);
  return createPoolExecutor(
    options.pool,
    {
      cwd,
      cacheSafeParams,
      toolNames: tools.map((tool) => tool.name),
      profile: agentProfile({
        model: cacheSafeParams.model,
        fallbackModels: spec.fallbackModels,
        modelOverrides: source.modelOverrides,
        thinking: loop.thinking,
        toolUseSummaryModel: loop.toolUseSummaryModel,
        contextEditing: loop.contextEditing,
        limits: { maxTurns: spec.maxTurns },
        permissionMode: spec.permissionMode,
        permissionRules: rules,
        bash: options.bash,
        home: options.home,
      }),
      ...(parentTools.length === 0 ? {} : { parentTools, sideUsage }),
      ...(options.requestSlot === undefined ? {} : { requestSlot: options.requestSlot }),
      ...(spec.outputSchema === undefined ? {} : { outputSchema: spec.outputSchema }),
      ...(options.modelTransport === undefined ? {} : { modelTransport: options.modelTransport }),
      transcriptsDir: options.transcriptsDir,
      ...(options.failsEveryItem === undefined ? {} : { failsEveryItem: options.failsEveryItem }),
      ...(options.recordSideEffect === undefined
        ? {}
        : {
            sideEffects: {
              isMutating: (name: string, input: Record<string, unknown>) =>
                isMutatingCall(tools, name, input),
              record: options.recordSideEffect,
            },
          }),
      // Every hook event runs for each item, which is a session of its own (R-X4).
      hooks: settingsHooks(settings, {
        cwd,
        sessionId: spec.id,
        sessionOf: batchItemSession(options.transcriptsDir),
        onNotice: options.onNotice,
      }),
    },
    options.onEvent,
  );
}

/** Whether a call would change something: a known tool, valid input, not read-only. */
function isMutatingCall(tools: readonly Tool[], name: string, input: Record<string, unknown>): boolean {
  const tool = tools.find((candidate) => candidate.name === name || candidate.aliases?.includes(name));
  if (!tool) return false; // answered with "no such tool": runs nothing
  const parsed = tool.inputSchema.safeParse(input);
  if (!parsed.success) return false; // rejected as invalid input: runs nothing
  try {
    return !tool.isReadOnly(parsed.data);
  } catch {
    return true;
  }
}

/**
 * R-V3: a batch thread's old generation is capped below 2 GiB. Under that size V8 grows the heap
 * by at most 1.3–2× its live objects after a collection instead of up to 4× (Node's default limit
 * is above it on most machines), and a thread that never idles never gets the memory-reducing
 * collection that would hand the growth back: 64 items in flight per thread live in ~50 MiB, yet
 * without a cap the two threads' heaps grew 70 → 140 MiB over 3,000 items, flat with it. 1 GiB
 * leaves room for items with very large conversations.
 */
const BATCH_THREAD_LIMITS = { maxOldGenerationSizeMb: 1024 } as const;

/** The worker pool for `concurrency` items at once: a thread per core, the items spread over them. */
export function createBatchPool(
  source: ModelSource,
  concurrency: number,
  clock: SharedClock | undefined,
): AgentPool {
  const threads = Math.max(1, Math.min(availableParallelism(), concurrency));
  return createAgentPool({
    endpoint: source.endpoint,
    maxThreads: threads,
    concurrentTasksPerWorker: Math.ceil(concurrency / threads),
    resourceLimits: BATCH_THREAD_LIMITS,
    ...(clock === undefined ? {} : { clock }),
  });
}
