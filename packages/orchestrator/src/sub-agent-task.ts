import { randomUUID } from "node:crypto";
import type { CacheSafeParams, Message, MessageParam, ModelInfo, PermissionMode } from "@forkloop/loop-core";
import type { AgentSessionMemory } from "./agent-context.js";
import { buildForkDirective } from "./fork-messages.js";
import type { PermissionRules, SubAgentTask } from "./sub-agent-types.js";

/** What a caller says about a sub-agent; `buildSubAgentTask` fills in the rest. */
export interface SubAgentTaskSpec {
  /** Default: the query source made safe as a name, plus a random suffix. */
  readonly id?: string;
  readonly cwd: string;
  /** Default `[cwd]`. */
  readonly workspaceRoots?: readonly string[];
  /** The parent's exact prefix (R-F3). */
  readonly cacheSafeParams: CacheSafeParams;
  /** The fork's instruction; becomes `buildForkDirective(cacheSafeParams, directive)`. */
  readonly directive?: string;
  /** Or the fork's own messages, appended as they are (overrides `directive`). */
  readonly promptMessages?: readonly MessageParam[] | readonly Message[];
  readonly querySource: string;
  /** Built-in tools the sub-agent may call (default none: a text-only fork). */
  readonly toolNames?: readonly string[];
  /** Default `plan` (read-only): a sub-agent that must write says so. */
  readonly permissionMode?: PermissionMode;
  readonly permissionRules?: PermissionRules | undefined;
  readonly maxTurns?: number | undefined;
  /** Documented cache break when it changes the thinking budget (README). */
  readonly maxOutputTokens?: number | undefined;
  readonly tokenBudget?: number | undefined;
  readonly transcriptPath?: string | undefined;
  /** The models file's entries: the sub-agent's thresholds (R-C7) and costs. */
  readonly modelOverrides?: readonly ModelInfo[] | undefined;
  readonly fallbackModels?: readonly string[] | undefined;
  readonly sessionMemory?: AgentSessionMemory | undefined;
  readonly parent?: SubAgentTask["parent"];
}

/**
 * The one builder of sub-agent tasks: `fork()`, the Agent and Skill tools and the batch executor
 * all describe their sub-agent with a spec and get the same task shape — so an option one of
 * them passes (say the models file's windows, which set a sub-agent's compaction thresholds)
 * cannot be forgotten by another.
 */
export function buildSubAgentTask(spec: SubAgentTaskSpec): SubAgentTask {
  return {
    id: spec.id ?? `${spec.querySource.replace(/[^\w-]/g, "-")}-${randomUUID().slice(0, 8)}`,
    cwd: spec.cwd,
    workspaceRoots: spec.workspaceRoots ?? [spec.cwd],
    cacheSafeParams: spec.cacheSafeParams,
    promptMessages:
      spec.promptMessages ?? buildForkDirective(spec.cacheSafeParams, spec.directive ?? "Continue."),
    querySource: spec.querySource,
    toolNames: spec.toolNames ?? [],
    permissionMode: spec.permissionMode ?? "plan",
    ...defined("maxTurns", spec.maxTurns),
    ...defined("maxOutputTokens", spec.maxOutputTokens),
    ...defined("tokenBudget", spec.tokenBudget),
    ...defined("permissionRules", spec.permissionRules),
    ...defined("transcriptPath", spec.transcriptPath),
    ...defined("modelOverrides", spec.modelOverrides),
    ...defined("fallbackModels", spec.fallbackModels),
    ...defined("sessionMemory", spec.sessionMemory),
    ...defined("parent", spec.parent),
  };
}

/** `{ key: value }`, or nothing when the value is undefined (exactOptionalPropertyTypes). */
function defined<Key extends string, Value>(key: Key, value: Value | undefined): { [K in Key]?: Value } {
  return value === undefined ? {} : ({ [key]: value } as { [K in Key]: Value });
}
