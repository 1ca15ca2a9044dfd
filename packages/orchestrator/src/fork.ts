import { randomUUID } from "node:crypto";
import type { CacheSafeParams, Message, MessageParam, ModelInfo, PermissionMode } from "@forkloop/loop-core";
import type { AgentPool } from "./agent-pool.js";
import { buildForkDirective } from "./fork-messages.js";
import type { ParentCallbacks, PermissionRules, SubAgentHandle, SubAgentTask } from "./sub-agent-types.js";

export interface ForkOptions {
  /** The parent's exact prefix (R-F3), e.g. the main loop's latest saved value. */
  readonly cacheSafeParams: CacheSafeParams;
  readonly querySource: string;
  readonly cwd: string;
  /** The fork's instruction; becomes `buildForkDirective(cacheSafeParams, directive)`. */
  readonly directive?: string;
  /** Or the fork's own messages, appended as they are (overrides `directive`). */
  readonly promptMessages?: readonly MessageParam[] | readonly Message[];
  readonly id?: string;
  readonly maxTurns?: number;
  /** Documented cache break when it changes the thinking budget (README). */
  readonly maxOutputTokens?: number;
  readonly tokenBudget?: number;
  /** Tools the fork may use (default none: a text-only fork, every call denied). */
  readonly toolNames?: readonly string[];
  /** Default `plan` (read-only) — a fork that must write says so. */
  readonly permissionMode?: PermissionMode;
  readonly permissionRules?: PermissionRules;
  readonly workspaceRoots?: readonly string[];
  readonly transcriptPath?: string;
  readonly modelOverrides?: readonly ModelInfo[];
}

/**
 * `fork()`: runs a sub-agent in the pool whose request is the parent's exact prefix plus the
 * fork's own messages (R-F3), so the parent's conversation is a cache read.
 */
export function fork(pool: AgentPool, options: ForkOptions, hooks?: ParentCallbacks): SubAgentHandle {
  const promptMessages =
    options.promptMessages ?? buildForkDirective(options.cacheSafeParams, options.directive ?? "Continue.");
  const task: SubAgentTask = {
    id: options.id ?? `${options.querySource.replace(/[^\w-]/g, "-")}-${randomUUID().slice(0, 8)}`,
    cwd: options.cwd,
    workspaceRoots: options.workspaceRoots ?? [options.cwd],
    cacheSafeParams: options.cacheSafeParams,
    promptMessages,
    querySource: options.querySource,
    toolNames: options.toolNames ?? [],
    permissionMode: options.permissionMode ?? "plan",
    ...(options.maxTurns === undefined ? {} : { maxTurns: options.maxTurns }),
    ...(options.maxOutputTokens === undefined ? {} : { maxOutputTokens: options.maxOutputTokens }),
    ...(options.tokenBudget === undefined ? {} : { tokenBudget: options.tokenBudget }),
    ...(options.permissionRules === undefined ? {} : { permissionRules: options.permissionRules }),
    ...(options.transcriptPath === undefined ? {} : { transcriptPath: options.transcriptPath }),
    ...(options.modelOverrides === undefined ? {} : { modelOverrides: options.modelOverrides }),
  };
  return pool.run(task, hooks);
}
