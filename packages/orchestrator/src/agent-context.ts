import {
  type CompactionEvent,
  type CompactionPipeline,
  type CompactRunner,
  type ContextPipelineOptions,
  createContextPipeline,
  createFileSessionMemoryStore,
} from "@forkloop/compaction";
import type { ModelInfo, Usage } from "@forkloop/loop-core";

/** R-C5 notes of one agent: `<dir>/<name>.md`, refreshed every `intervalTokens` of growth. */
export interface AgentSessionMemory {
  readonly dir: string;
  /** File name without `.md` (default `memory`). */
  readonly name?: string;
  /** Default: compaction's, a quarter of the auto-compact line. */
  readonly intervalTokens?: number;
}

export interface AgentContextOptions {
  /** Runs the agent's compact and session-memory requests: cache-safe forks of its own prefix (R-F3). */
  readonly runCompact: CompactRunner;
  /** The models file's entries: the thresholds come from the catalog, these win (R-C7). */
  readonly modelOverrides?: readonly ModelInfo[];
  /** R-C7: the run's auto-compact window cap (Claude Code's `--autocompact N`). */
  readonly autoCompactWindow?: number | undefined;
  readonly sessionMemory?: AgentSessionMemory;
  readonly onEvent?: (event: CompactionEvent) => void;
  /** The agent's PreCompact, PostCompact and SessionStart `compact` hooks (`compactionHooks`). */
  readonly onPreCompact?: ContextPipelineOptions["onPreCompact"];
  readonly onPostCompact?: ContextPipelineOptions["onPostCompact"];
  readonly onCompacted?: ContextPipelineOptions["onCompacted"];
  /** R-C2 by the API (`apiMicrocompactEdits` in the agent's requests): no client-side microcompact. */
  readonly contextEditing?: boolean;
}

/**
 * §4 for every agent (R-C4): the context pipeline of a session's main loop, of a
 * sub-agent and of a batch item, built from the same options. Each agent gets its own, so the
 * R-C4 breaker, the R-C6 one-shot guard and the R-C7 hard limit hold per agent, and its compact
 * requests fork from that agent's own prefix, never its parent's.
 */
export function createAgentContextPipeline(options: AgentContextOptions): CompactionPipeline {
  const memory = options.sessionMemory;
  return createContextPipeline({
    runCompact: options.runCompact,
    ...(options.contextEditing === true ? { clientMicrocompact: false } : {}),
    ...(options.modelOverrides === undefined ? {} : { modelOverrides: options.modelOverrides }),
    ...(options.autoCompactWindow === undefined ? {} : { autoCompactWindow: options.autoCompactWindow }),
    ...(memory === undefined
      ? {}
      : {
          sessionMemory: createFileSessionMemoryStore({
            dir: memory.dir,
            sessionId: memory.name ?? "memory",
          }),
          ...(memory.intervalTokens === undefined
            ? {}
            : { sessionMemoryIntervalTokens: memory.intervalTokens }),
        }),
    ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent }),
    ...(options.onPreCompact === undefined ? {} : { onPreCompact: options.onPreCompact }),
    ...(options.onPostCompact === undefined ? {} : { onPostCompact: options.onPostCompact }),
    ...(options.onCompacted === undefined ? {} : { onCompacted: options.onCompacted }),
  });
}

/** A CompactRunner that reports what each successful request cost (the agent's usage counts it). */
export function meteredCompactRunner(runner: CompactRunner, onUsage: (usage: Usage) => void): CompactRunner {
  return async (request) => {
    const result = await runner(request);
    if (result.ok) onUsage(result.usage);
    return result;
  };
}
