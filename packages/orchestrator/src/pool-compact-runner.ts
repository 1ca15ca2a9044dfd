import { randomUUID } from "node:crypto";
import type { CompactRunner, CompactRunResult } from "@forkloop/compaction";
import {
  apiErrorText,
  type LoopHooks,
  type PermissionMode,
  type ToolUseContext,
  type Usage,
} from "@forkloop/loop-core";
import type { AgentPool } from "./agent-pool.js";
import { agentProfile } from "./agent-profile.js";
import { fork } from "./fork.js";
import type { ParentCallbacks, SubAgentResult, SubAgentTask } from "./sub-agent-types.js";

/** A fork as the session links it from its transcript. */
export interface StartedFork {
  readonly id: string;
  readonly transcriptPath?: string | undefined;
  readonly querySource: string;
}

export interface PoolCompactRunnerOptions {
  readonly cwd: string;
  readonly workspaceRoots?: readonly string[];
  /** Where each fork's transcript goes (by its agent id); default: no transcript. */
  readonly transcriptPath?: (agentId: string) => string;
  /** The session that forks (named in the fork's transcript). */
  readonly parent?: SubAgentTask["parent"];
  /** Called as each fork starts (the session links the fork's transcript from its own). */
  readonly onForkStarted?: (fork: StartedFork) => void;
  /**
   * The session's hooks: the summary fork's stop runs their Stop hooks (a SubagentStop, as Claude
   * Code's summariser's, R-X1), which only observe it — a blocking answer does not make a
   * one-turn summary go on. No other hook sees a compaction fork.
   */
  readonly hooks?: LoopHooks;
  /** The session's permission mode now (what the summary's SubagentStop reports, not the fork's plan mode). */
  readonly permissionMode?: () => PermissionMode;
}

/** The session's Stop hooks, as observers of the summary fork's stop. */
function summaryStopHooks(options: PoolCompactRunnerOptions): ParentCallbacks | undefined {
  const stop = options.hooks?.stop;
  if (stop === undefined || stop.length === 0) return undefined;
  const withSessionMode = (context: ToolUseContext): ToolUseContext => {
    const permissionMode = options.permissionMode?.();
    return permissionMode === undefined
      ? context
      : { ...context, options: { ...context.options, permissionMode } };
  };
  return {
    hooks: {
      stop: stop.map((hook) => async (input) => {
        await hook({ ...input, context: withSessionMode(input.context) });
        return {};
      }),
    },
  };
}

/**
 * Why a fork gave no summary. An API error is in Claude Code's words, as its assistant message
 * would say it (`API Error: 400 Invalid request`; a failed /compact prints it, R-X1).
 */
function forkErrorText(result: SubAgentResult, source: string, model: string): string {
  const error = result.error;
  if (error === undefined) return `the ${source} fork returned no text (${result.status})`;
  return error.status === undefined
    ? error.message
    : apiErrorText({ status: error.status, message: error.message }, model);
}

/**
 * A `CompactRunner` for @forkloop/compaction that runs the compact (and session-memory) request
 * as a fork in the pool (R-F1, R-C4, R-C5): the parent's exact prefix + one instruction, so the
 * whole history is a cache read (R-F3); one turn, every tool denied (plan mode, no tools).
 */
export function createPoolCompactRunner(pool: AgentPool, options: PoolCompactRunnerOptions): CompactRunner {
  return async ({ cacheSafeParams, instruction, signal, querySource }): Promise<CompactRunResult> => {
    const source = querySource ?? "compact";
    // Unique across resumes of one session: the id names the fork's transcript file.
    const id = `${source}-${randomUUID().slice(0, 8)}`;
    const transcriptPath = options.transcriptPath?.(id);
    options.onForkStarted?.({ id, transcriptPath, querySource: source });
    const handle = fork(
      pool,
      {
        id,
        cwd: options.cwd,
        transcriptPath,
        parent: options.parent,
        ...(options.workspaceRoots === undefined ? {} : { workspaceRoots: options.workspaceRoots }),
        cacheSafeParams,
        directive: instruction,
        querySource: source,
        profile: agentProfile({
          model: cacheSafeParams.model,
          permissionMode: "plan",
          limits: { maxTurns: 1 },
        }),
      },
      source === "compact" ? summaryStopHooks(options) : undefined,
    );
    const onAbort = () => handle.cancel("compaction aborted");
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    try {
      const result = await handle.result;
      if (result.status !== "completed" || result.text.length === 0) {
        return { ok: false, error: forkErrorText(result, source, cacheSafeParams.model) };
      }
      const usage = {
        input_tokens: result.usage.inputTokens,
        output_tokens: result.usage.outputTokens,
        cache_creation_input_tokens: result.usage.cacheCreationInputTokens,
        cache_read_input_tokens: result.usage.cacheReadInputTokens,
      } as Usage;
      return { ok: true, summary: result.text, usage };
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  };
}
