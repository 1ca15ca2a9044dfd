import type { LoopHooks } from "@forkloop/loop-core";
import {
  createSessionEventHooks,
  createSettingsHooks,
  EMPTY_SETTINGS,
  type HeldPoints,
  type HookRunObserver,
  loadSettings,
  SETTING_SOURCES,
  type SessionEventHooks,
  type SettingSource,
  type Settings,
  type SettingsHooksOptions,
} from "@forkloop/tools";
import { OptionsError } from "./options-error.js";

/**
 * The merged settings files (`.forkloop/settings.json`, `.claude/settings.json`, `.local`
 * variants, the user's home ones). A bad file stops the command with exit 2 and the tools
 * package's message, which names the file, the key path and the fix.
 */
export async function loadRunSettings(
  cwd: string,
  home?: string,
  sources: readonly SettingSource[] = SETTING_SOURCES,
  options: {
    readonly trustProject?: boolean;
    readonly onIgnored?: (line: string) => void;
    /** Claude Code's `--settings`: one more file, or JSON text, read last and trusted (settings-flag.ts). */
    readonly flagSettings?: { readonly label: string; readonly text: string };
    /** Files running sandboxed commands may still create: skipped, said once (R-S9). */
    readonly held?: HeldPoints;
  } = {},
): Promise<Settings> {
  if (sources.length === 0 && options.flagSettings === undefined) return EMPTY_SETTINGS;
  const loaded = await loadSettings(cwd, {
    sources,
    ...(home === undefined ? {} : { home }),
    ...(options.trustProject === undefined ? {} : { trustProject: options.trustProject }),
    ...(options.flagSettings === undefined ? {} : { flagSettings: options.flagSettings }),
    ...(options.held === undefined ? {} : { held: options.held }),
  });
  if (!loaded.ok) throw new OptionsError(`bad settings: ${loaded.error}`);
  // R-S5: what an untrusted project's files asked for and did not get, said once.
  for (const line of loaded.ignored) options.onIgnored?.(line);
  return loaded.settings;
}

/** Flags win over settings; rule lists from both apply (settings first, as Claude Code). */
export function mergeRules(
  settings: Settings,
  flags: { allow?: readonly string[] | undefined; deny?: readonly string[] | undefined },
): { allow: string[]; ask: string[]; deny: string[] } {
  return {
    allow: [...settings.permissions.allow, ...(flags.allow ?? [])],
    ask: [...settings.permissions.ask],
    deny: [...settings.permissions.deny, ...(flags.deny ?? [])],
  };
}

/**
 * The settings files' shell hooks as loop hooks (Claude Code's protocol, run by the tools
 * package); their non-blocking errors and system messages become one line each.
 */
export function settingsHooks(
  settings: Settings,
  options: {
    readonly cwd: string;
    readonly sessionId: string;
    readonly transcriptPath?: string;
    readonly onNotice?: ((line: string) => void) | undefined;
    /** SubagentStop's `agent_transcript_path`. */
    readonly agentTranscriptPath?: SettingsHooksOptions["agentTranscriptPath"];
    /** A sub-agent's type: `agent_type` of its events. */
    readonly agentType?: SettingsHooksOptions["agentType"];
    /** Agents with a session of their own (a batch's items). */
    readonly sessionOf?: SettingsHooksOptions["sessionOf"];
    /** Each hook command's run (`includeHookEvents`). */
    readonly onHookRun?: HookRunObserver | undefined;
    /** The current prompt's id and the requests' effort, read as each hook fires. */
    readonly promptId?: SettingsHooksOptions["promptId"];
    readonly effort?: SettingsHooksOptions["effort"];
    /** The message holding a tool call is out (SubagentStart fires after it). */
    readonly toolUseYielded?: SettingsHooksOptions["toolUseYielded"];
  },
): LoopHooks {
  return createSettingsHooks(settings, {
    cwd: options.cwd,
    sessionId: options.sessionId,
    ...(options.transcriptPath === undefined ? {} : { transcriptPath: options.transcriptPath }),
    ...(options.agentTranscriptPath === undefined
      ? {}
      : { agentTranscriptPath: options.agentTranscriptPath }),
    ...(options.sessionOf === undefined ? {} : { sessionOf: options.sessionOf }),
    ...(options.agentType === undefined ? {} : { agentType: options.agentType }),
    ...(options.onHookRun === undefined ? {} : { onHookRun: options.onHookRun }),
    ...(options.promptId === undefined ? {} : { promptId: options.promptId }),
    ...(options.effort === undefined ? {} : { effort: options.effort }),
    ...(options.toolUseYielded === undefined ? {} : { toolUseYielded: options.toolUseYielded }),
    onNotice: (notice) => options.onNotice?.(`hook ${notice.event} ${notice.kind}: ${notice.message}`),
  });
}

/** The settings files' MessageDisplay, PermissionRequest, StopFailure and SessionEnd shell hooks, which the session fires. */
export function sessionEventHooks(
  settings: Settings,
  options: {
    readonly cwd: string;
    readonly sessionId: string;
    readonly transcriptPath: string;
    readonly onNotice: (line: string) => void;
    readonly onHookRun?: HookRunObserver | undefined;
    readonly promptId?: SettingsHooksOptions["promptId"];
    /** PermissionRequest's `effort.level` and a sub-agent's type (`agent_type`). */
    readonly effort?: SettingsHooksOptions["effort"];
    readonly agentType?: SettingsHooksOptions["agentType"];
  },
): SessionEventHooks {
  return createSessionEventHooks(settings, {
    cwd: options.cwd,
    sessionId: options.sessionId,
    transcriptPath: options.transcriptPath,
    ...(options.promptId === undefined ? {} : { promptId: options.promptId }),
    ...(options.effort === undefined ? {} : { effort: options.effort }),
    ...(options.agentType === undefined ? {} : { agentType: options.agentType }),
    ...(options.onHookRun === undefined ? {} : { onHookRun: options.onHookRun }),
    onNotice: (notice) => options.onNotice(`hook ${notice.event} ${notice.kind}: ${notice.message}`),
  });
}

/** The PreToolUse/PostToolUse part of loop hooks: what a batch item's sub-agent runs. */
export function toolHooks(hooks: LoopHooks): Pick<LoopHooks, "preToolUse" | "postToolUse"> {
  return {
    ...(hooks.preToolUse === undefined ? {} : { preToolUse: hooks.preToolUse }),
    ...(hooks.postToolUse === undefined ? {} : { postToolUse: hooks.postToolUse }),
  };
}
