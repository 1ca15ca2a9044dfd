import type { PermissionMode } from "@forkloop/loop-core";
import { lazySchema } from "@forkloop/loop-core";
import { z } from "zod";
import { matcherError } from "../hooks/hook-matcher.js";
import { PERMISSION_MODES } from "../permissions/permission-modes.js";
import { parsePermissionRule } from "../permissions/permission-rules.js";

/** Events forkloop runs (R-X1: with Claude Code's input fields). */
export const HOOK_EVENTS = [
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "PostToolBatch",
  "PermissionRequest",
  "Stop",
  "StopFailure",
  "SubagentStart",
  "SubagentStop",
  "PreCompact",
  "PostCompact",
  "SessionStart",
  "SessionEnd",
  "UserPromptSubmit",
  "UserPromptExpansion",
  "InstructionsLoaded",
  "MessageDisplay",
] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];
/**
 * Every hook event Claude Code knows (2.1.332; the Agent SDK's HOOK_EVENTS of the same release,
 * in its order).
 */
export const CLAUDE_CODE_HOOK_EVENTS = [
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "PostToolBatch",
  "Notification",
  "UserPromptSubmit",
  "UserPromptExpansion",
  "SessionStart",
  "SessionEnd",
  "Stop",
  "StopFailure",
  "SubagentStart",
  "SubagentStop",
  "PreCompact",
  "PostCompact",
  "PreModelSwitch",
  "PostModelSwitch",
  "PermissionRequest",
  "PermissionDenied",
  "Setup",
  "TeammateIdle",
  "TaskCreated",
  "TaskCompleted",
  "Elicitation",
  "ElicitationResult",
  "ConfigChange",
  "WorktreeCreate",
  "WorktreeRemove",
  "InstructionsLoaded",
  "CwdChanged",
  "FileChanged",
  "DirectoryAdded",
  "MessageDisplay",
  "PreSkillShellCommand",
] as const;
/**
 * Claude Code's other hook events: accepted in settings, so a file written for Claude Code loads,
 * but never fired — they belong to its terminal, teammates, worktrees, plugins, elicitation,
 * model switching.
 */
export const FOREIGN_HOOK_EVENTS: readonly string[] = CLAUDE_CODE_HOOK_EVENTS.filter(
  (event) => !(HOOK_EVENTS as readonly string[]).includes(event),
);

/** Hook events a settings file names that neither forkloop nor Claude Code knows (a typo, a newer release). */
export function unknownHookEvents(hooks: Record<string, unknown> | undefined): string[] {
  const known: readonly string[] = CLAUDE_CODE_HOOK_EVENTS;
  return Object.keys(hooks ?? {}).filter((event) => !known.includes(event));
}

const ruleString = lazySchema(() =>
  z.string().superRefine((rule, context) => {
    const parsed = parsePermissionRule(rule);
    if ("error" in parsed) context.addIssue({ code: "custom", message: parsed.error });
  }),
);

const hookCommand = lazySchema(() =>
  z.strictObject({
    type: z.literal("command"),
    command: z.string().min(1),
    /** Seconds, as in Claude Code (default 60). */
    timeout: z.number().positive().optional(),
  }),
);

const hookMatcherGroup = lazySchema(() =>
  z.strictObject({
    matcher: z
      .string()
      .optional()
      .superRefine((matcher, context) => {
        const error = matcher === undefined ? undefined : matcherError(matcher);
        if (error !== undefined) context.addIssue({ code: "custom", message: error });
      }),
    hooks: z.array(hookCommand),
  }),
);

const hookEvents = CLAUDE_CODE_HOOK_EVENTS;
// Loose: an event neither forkloop nor Claude Code knows is a warning naming it (loadSettings), never a failed run.
const hooksSchema = lazySchema(() =>
  z.looseObject(
    Object.fromEntries(hookEvents.map((event) => [event, z.array(hookMatcherGroup).optional()])) as Record<
      (typeof hookEvents)[number],
      z.ZodOptional<z.ZodArray<typeof hookMatcherGroup>>
    >,
  ),
);

/** One settings file as written. Unknown top-level keys (Claude Code has many) are kept and ignored. */
export const settingsFileSchema = lazySchema(() =>
  z.looseObject({
    permissions: z
      .strictObject({
        allow: z.array(ruleString).optional(),
        ask: z.array(ruleString).optional(),
        deny: z.array(ruleString).optional(),
        defaultMode: z.enum(PERMISSION_MODES).optional(),
        additionalDirectories: z.array(z.string().min(1)).optional(),
        disableBypassPermissionsMode: z.literal("disable").optional(),
      })
      .optional(),
    hooks: hooksSchema.optional(),
    env: z.record(z.string(), z.string()).optional(),
    model: z.string().optional(),
    /** R-S6: Bash in bubblewrap — `on`, `off`, or `auto` (when bwrap works here). */
    sandbox: z.enum(["auto", "on", "off"]).optional(),
    /** R-L17, Claude Code's key: adaptive thinking on (true) or off. */
    alwaysThinkingEnabled: z.boolean().optional(),
    /** R-L17: extended thinking with this budget (≥ 1024; 0 = off); wins over alwaysThinkingEnabled. */
    maxThinkingTokens: z
      .number()
      .int()
      .refine((value) => value === 0 || value >= 1024, "must be 0 or at least 1024")
      .optional(),
    /** R-L18: the small model that summarizes each tool batch. */
    toolUseSummaryModel: z.string().min(1).optional(),
    /** R-C2: old tool results cleared by the API (context editing) instead of the client. */
    contextEditing: z.boolean().optional(),
    /**
     * R-X2, Claude Code's key: a shell command printing the API key requests authenticate with when
     * the environment has none. A program: an untrusted project's files cannot name it (R-S5).
     */
    apiKeyHelper: z.string().optional(),
    /** R-X1, Claude Code's key: what `--worktree` starts from; "head" is local HEAD, anything else the remote's default branch. */
    worktree: z.looseObject({ baseRef: z.string().optional() }).optional(),
  }),
);
export type SettingsFile = z.infer<typeof settingsFileSchema>;

export interface HookCommandSetting {
  readonly type: "command";
  readonly command: string;
  readonly timeout?: number | undefined;
}
export interface HookMatcherSetting {
  readonly matcher?: string | undefined;
  readonly hooks: readonly HookCommandSetting[];
}
export type HookSettings = { readonly [Event in HookEvent]?: readonly HookMatcherSetting[] };

/** The merged settings forkloop runs with. */
export interface Settings {
  readonly permissions: {
    readonly allow: readonly string[];
    readonly ask: readonly string[];
    readonly deny: readonly string[];
    readonly defaultMode?: PermissionMode;
    /** Absolute paths: extra workspace roots (R-P1). */
    readonly additionalDirectories?: readonly string[];
    readonly disableBypassPermissionsMode?: "disable";
  };
  readonly hooks: HookSettings;
  readonly env?: Readonly<Record<string, string>>;
  readonly model?: string;
  readonly sandbox?: "auto" | "on" | "off";
  readonly alwaysThinkingEnabled?: boolean;
  readonly maxThinkingTokens?: number;
  readonly toolUseSummaryModel?: string;
  readonly contextEditing?: boolean;
  /** R-X2: the command printing the API key (user files, `--settings`, a trusted project's). */
  readonly apiKeyHelper?: string;
  /** R-X1: settings' `worktree.baseRef` (Claude Code's): "head" makes `--worktree` start from local HEAD. */
  readonly worktreeBaseRef?: string;
}

export const EMPTY_SETTINGS: Settings = { permissions: { allow: [], ask: [], deny: [] }, hooks: {} };

/** A fix for the most common mistakes, keyed by the first segment of the issue path. */
export function fixFor(path: readonly PropertyKey[]): string {
  const [first, second] = path;
  if (first === "hooks") {
    return 'write hooks as {"PreToolUse": [{"matcher": "Bash|Edit", "hooks": [{"type": "command", "command": "./check.sh", "timeout": 30}]}]}';
  }
  if (first === "permissions" && second === "defaultMode") return `use one of ${PERMISSION_MODES.join(", ")}`;
  if (first === "permissions" && (second === "allow" || second === "ask" || second === "deny")) {
    return 'write rules like "Bash(npm test:*)", "Edit(src/**)" or "Read(./.env)"';
  }
  if (first === "sandbox") return 'use "auto", "on" or "off"';
  if (first === "maxThinkingTokens")
    return "give a whole number of at least 1024, e.g. 8000, or 0 for no thinking";
  if (first === "alwaysThinkingEnabled" || first === "contextEditing") return "use true or false";
  if (first === "apiKeyHelper")
    return 'give the shell command that prints the API key, e.g. "~/bin/get-key.sh"';
  if (first === "permissions")
    return "permissions takes allow, ask, deny (lists of rules), defaultMode and additionalDirectories";
  return "see the Settings section of packages/tools/README.md";
}
