import { apiMicrocompactEdits } from "@forkloop/compaction";
import {
  getModelInfo,
  type ModelInfo,
  type OutputConfig,
  type PermissionMode,
  type QueryParams,
  type ThinkingConfigParam,
} from "@forkloop/loop-core";
import type { SandboxPolicy } from "@forkloop/tools";

export interface PermissionRules {
  readonly allow: readonly string[];
  readonly ask: readonly string[];
  readonly deny: readonly string[];
}

/**
 * How a sub-agent's Bash runs, as the parent's own Bash does (R-S4, R-S6): the worker builds its
 * Bash tool from this, so a batch item or an Agent sub-agent runs sandboxed when the parent's Bash
 * is, and gets the settings' `env` (the model credentials are removed from the worker's
 * environment either way).
 */
export interface SubAgentBashOptions {
  /** Resolved already (`auto` → on/off in the parent, probeBubblewrap). */
  readonly sandbox?: SandboxPolicy;
  /** Settings `env`, added after the credentials are removed. */
  readonly env?: Readonly<Record<string, string>>;
}

/** How far an agent may go: turns, the output cap, the user's token target. */
export interface AgentLimits {
  /** R-L19. */
  readonly maxTurns?: number | undefined;
  /** R-L14: the user's token target ("+500k"). */
  readonly tokenBudget?: number | undefined;
  /** R-L3: the API's task budget in tokens (`output_config.task_budget`, the Agent SDK's `taskBudget`). */
  readonly taskBudget?: { readonly total: number } | undefined;
  /** Changing it can change the thinking budget, which breaks the message cache (R-F3). */
  readonly maxOutputTokens?: number | undefined;
}

/**
 * Everything that decides how one agent talks to the model and what it may do, as one frozen,
 * plain value: it goes whole from the run's options to the session, into each fork's task (a
 * worker receives it structured-cloned), into a batch's items and into the loop's options, so a
 * choice made once reaches every agent of the run and cannot be forgotten by one of them.
 *
 * `permissionMode` is the mode at start; the live mode of a running session is its mode cell
 * (R-S14), which every permission check reads at call time.
 */
export interface AgentProfile {
  readonly model: string;
  /** R-L8: models tried, in order, after `model` stays overloaded. */
  readonly fallbackModels: readonly string[];
  /** The models file's entries: context windows (R-C7 thresholds) and prices. */
  readonly modelOverrides: readonly ModelInfo[];
  /**
   * R-C7: caps the window both lines are measured from, min(context window, this) (Claude Code's
   * `--autocompact N`); the reported context window stays the model's. Default: no cap.
   */
  readonly autoCompactWindow?: number;
  /** R-L17. */
  readonly thinking?: ThinkingConfigParam;
  /** `output_config.effort` of the main loop's requests (forks' replies are reports, not the answer). */
  readonly effort?: NonNullable<OutputConfig["effort"]>;
  /** R-L18: a background summary of each tool batch by this small model. */
  readonly toolUseSummaryModel?: string;
  /** R-C2 by the API: `clear_tool_uses` in each request, no client microcompact. */
  readonly contextEditing: boolean;
  readonly limits: AgentLimits;
  readonly permissionMode: PermissionMode;
  readonly permissionRules: PermissionRules;
  /** How Bash runs: the sandbox and the settings' `env` (R-S6, R-S4). */
  readonly bash: SubAgentBashOptions;
  /**
   * The user's home as the run sees it (`query()`'s `env.HOME`, the CLI's HOME); default
   * `os.homedir()`. Permission checks and the merge of an isolated agent's change judge the
   * user's own files by it (R-S10): a library caller's HOME need not be this process's.
   */
  readonly home?: string;
}

/** What a caller says; everything but the model has a default. */
export type AgentProfileFields = Pick<AgentProfile, "model"> & {
  readonly [Field in Exclude<keyof AgentProfile, "model">]?: AgentProfile[Field] | undefined;
};

const DEFAULTS = {
  fallbackModels: [],
  modelOverrides: [],
  contextEditing: false,
  limits: {},
  permissionMode: "default",
  permissionRules: { allow: [], ask: [], deny: [] },
  bash: {},
} as const satisfies Omit<AgentProfile, "model">;

/** The profile of `fields`, with defaults for what they leave out, frozen all the way down. */
export function agentProfile(fields: AgentProfileFields): AgentProfile {
  const given = Object.fromEntries(
    Object.entries(fields).filter(([, value]) => value !== undefined),
  ) as Partial<AgentProfile>;
  return deepFreeze({ ...DEFAULTS, ...given, model: fields.model });
}

/** `profile` with some fields changed (a fork on another model, a batch's turn limit …). */
export function withProfile(profile: AgentProfile, changes: Partial<AgentProfileFields>): AgentProfile {
  return agentProfile({ ...profile, ...changes } as AgentProfileFields);
}

/**
 * The loop options a profile decides, for a request on `model` (a fork's model is its prefix's).
 * The one place a profile becomes `query()` options. Thinking and the output cap are part of the
 * cached prefix (R-F3): the caller passes its prefix's.
 */
export function profileLoopOptions(
  profile: AgentProfile,
  model: string,
): Pick<
  QueryParams,
  | "fallbackModels"
  | "modelOverrides"
  | "autoCompactWindow"
  | "maxTurns"
  | "tokenBudget"
  | "taskBudget"
  | "toolUseSummaryModel"
  | "contextEditing"
  | "maxOutputTokens"
> {
  const { limits } = profile;
  const info = getModelInfo(model, profile.modelOverrides);
  return {
    fallbackModels: profile.fallbackModels,
    modelOverrides: profile.modelOverrides,
    ...(profile.autoCompactWindow === undefined ? {} : { autoCompactWindow: profile.autoCompactWindow }),
    // Never above the model's own cap: a fork or a switch to a smaller model keeps the choice.
    ...(limits.maxOutputTokens === undefined
      ? {}
      : { maxOutputTokens: Math.min(limits.maxOutputTokens, info.maxOutputTokens) }),
    ...(limits.maxTurns === undefined ? {} : { maxTurns: limits.maxTurns }),
    ...(limits.tokenBudget === undefined ? {} : { tokenBudget: limits.tokenBudget }),
    ...(limits.taskBudget === undefined ? {} : { taskBudget: limits.taskBudget }),
    ...(profile.toolUseSummaryModel === undefined
      ? {}
      : { toolUseSummaryModel: profile.toolUseSummaryModel }),
    ...(profile.contextEditing
      ? { contextEditing: apiMicrocompactEdits(info, profile.autoCompactWindow) }
      : {}),
  };
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** The main loop's `output_config`: the profile's effort and a structured-output format (forks get neither). */
export function profileOutputConfig(
  profile: AgentProfile,
  format: OutputConfig["format"] | undefined,
): OutputConfig | undefined {
  if (profile.effort === undefined && format === undefined) return undefined;
  return {
    ...(profile.effort === undefined ? {} : { effort: profile.effort }),
    ...(format === undefined ? {} : { format }),
  };
}
