import { randomUUID } from "node:crypto";
import { agentProfile, withProfile } from "./agent-profile.js";
import { buildForkDirective } from "./fork-messages.js";
import type { SubAgentTask } from "./sub-agent-types.js";

type RequiredFields = "cwd" | "cacheSafeParams" | "querySource";

/**
 * What a caller says about a sub-agent: the task's own fields (the parent's prefix, the query
 * source, the cwd; any other field may be left out or undefined) plus, instead of the prompt
 * messages, a `directive` that becomes `buildForkDirective(cacheSafeParams, directive)`.
 * Defaults: `workspaceRoots` `[cwd]`, no tools (a text-only fork), a profile of the prefix's model
 * in `plan` mode (read-only). The profile's model is always the prefix's (R-F3).
 */
export type SubAgentTaskSpec = Pick<SubAgentTask, RequiredFields> & {
  readonly [Field in Exclude<keyof SubAgentTask, RequiredFields>]?: SubAgentTask[Field] | undefined;
} & { readonly directive?: string | undefined };

/**
 * The one builder of sub-agent tasks: `fork()`, the Agent and Skill tools and the batch executor
 * all describe their sub-agent with a spec and get the same task shape — so an option one of
 * them passes (say the models file's windows, which set a sub-agent's compaction thresholds)
 * cannot be forgotten by another, and a field added to `SubAgentTask` passes through all of them.
 */
export function buildSubAgentTask(spec: SubAgentTaskSpec): SubAgentTask {
  const { id, directive, promptMessages, workspaceRoots, toolNames, profile, ...rest } = spec;
  const given = Object.fromEntries(Object.entries(rest).filter(([, value]) => value !== undefined));
  const model = spec.cacheSafeParams.model;
  return {
    ...(given as Omit<SubAgentTask, "id" | "workspaceRoots" | "promptMessages" | "toolNames" | "profile">),
    id: id ?? `${spec.querySource.replace(/[^\w-]/g, "-")}-${randomUUID().slice(0, 8)}`,
    workspaceRoots: workspaceRoots ?? [spec.cwd],
    promptMessages: promptMessages ?? buildForkDirective(spec.cacheSafeParams, directive ?? "Continue."),
    toolNames: toolNames ?? [],
    profile:
      profile === undefined
        ? agentProfile({ model, permissionMode: "plan" })
        : profile.model === model
          ? profile
          : withProfile(profile, { model }),
  };
}
