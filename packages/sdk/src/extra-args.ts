import type { Options } from "./options.js";
import { OptionsError } from "./options-error.js";

type Flag = (value: string | null, options: Options) => Options;

function required(flag: string, value: string | null): string {
  if (value === null || value === "")
    throw new OptionsError(`extraArgs["${flag}"] needs a value, as --${flag} does.`);
  return value;
}

function number(flag: string, value: string | null, integer: boolean): number {
  const parsed = Number(required(flag, value));
  if (!Number.isFinite(parsed) || parsed < 0 || (integer && !Number.isInteger(parsed))) {
    throw new OptionsError(
      `extraArgs["${flag}"] is ${JSON.stringify(value)}: give a non-negative ${integer ? "integer" : "number"}.`,
    );
  }
  return parsed;
}

/** `--allowedTools "Read Bash(git:*)"`: names separated by commas or spaces outside parentheses. */
function toolList(value: string): string[] {
  return (value.match(/[^\s,()]+(?:\([^)]*\))?/g) ?? []).filter((name) => name !== "");
}

function json(flag: string, value: string | null): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(required(flag, value));
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new OptionsError(`extraArgs["${flag}"] is not a JSON object (the JSON Schema --${flag} takes).`);
}

/**
 * The Claude Code CLI flags a program may pass through the Agent SDK's `extraArgs` (which the
 * Agent SDK appends to Claude Code's command line), each read as the option it stands for; a
 * flag given this way wins over the option, as the later flag does on a command line. `null` is
 * a flag without a value.
 */
const FLAGS: Readonly<Record<string, Flag>> = {
  "json-schema": (value, options) => ({
    ...options,
    outputFormat: { type: "json_schema", schema: json("json-schema", value) },
  }),
  "max-turns": (value, options) => ({ ...options, maxTurns: number("max-turns", value, true) }),
  "max-budget-usd": (value, options) => ({
    ...options,
    maxBudgetUsd: number("max-budget-usd", value, false),
  }),
  model: (value, options) => ({ ...options, model: required("model", value) }),
  "fallback-model": (value, options) => ({ ...options, fallbackModel: required("fallback-model", value) }),
  "mcp-config": (value, options) => ({
    ...options,
    mcpConfig: [...(options.mcpConfig ?? []), required("mcp-config", value)],
  }),
  "strict-mcp-config": (_value, options) => ({ ...options, strictMcpConfig: true }),
  "setting-sources": (value, options) => ({
    ...options,
    settingSources: required("setting-sources", value)
      .split(",")
      .map((source) => source.trim())
      .filter((source) => source !== "") as NonNullable<Options["settingSources"]>,
  }),
  settings: (value, options) => ({ ...options, settings: required("settings", value) }),
  allowedTools: (value, options) => ({
    ...options,
    allowedTools: [...(options.allowedTools ?? []), ...toolList(required("allowedTools", value))],
  }),
  disallowedTools: (value, options) => ({
    ...options,
    disallowedTools: [...(options.disallowedTools ?? []), ...toolList(required("disallowedTools", value))],
  }),
  "permission-mode": (value, options) => ({
    ...options,
    permissionMode: required("permission-mode", value) as NonNullable<Options["permissionMode"]>,
  }),
  "system-prompt": (value, options) => ({ ...options, systemPrompt: required("system-prompt", value) }),
  "append-system-prompt": (value, options) => ({
    ...options,
    systemPrompt: {
      type: "preset",
      preset: "claude_code",
      append: required("append-system-prompt", value),
    },
  }),
  "add-dir": (value, options) => ({
    ...options,
    additionalDirectories: [...(options.additionalDirectories ?? []), required("add-dir", value)],
  }),
  "include-partial-messages": (_value, options) => ({ ...options, includePartialMessages: true }),
  "replay-user-messages": (_value, options) => ({ ...options, replayUserMessages: true }),
  "include-hook-events": (_value, options) => ({ ...options, includeHookEvents: true }),
  bare: (_value, options) => ({ ...options, bare: true }),
  "safe-mode": (_value, options) => ({ ...options, safeMode: true }),
  "forward-subagent-text": (_value, options) => ({ ...options, forwardSubagentText: true }),
  effort: (value, options) => ({
    ...options,
    effort: required("effort", value) as NonNullable<Options["effort"]>,
  }),
  "fork-session": (_value, options) => ({ ...options, forkSession: true }),
  "permission-prompt-tool": (value, options) => ({
    ...options,
    permissionPromptToolName: required("permission-prompt-tool", value),
  }),
  resume: (value, options) => ({ ...options, resume: required("resume", value) }),
  continue: (_value, options) => ({ ...options, continue: true }),
  agent: (value, options) => ({ ...options, agent: required("agent", value) }),
  "no-session-persistence": (_value, options) => ({ ...options, persistSession: false }),
  // The output flags the Agent SDK itself passes: a query's messages are always these.
  verbose: (_value, options) => options,
};
const ALIASES: Readonly<Record<string, string>> = {
  "allowed-tools": "allowedTools",
  "disallowed-tools": "disallowedTools",
};

/** The flags forkloop reads from `extraArgs`, for messages and the README. */
export const EXTRA_ARGS_FLAGS: readonly string[] = Object.keys(FLAGS);

/**
 * `options` with its `extraArgs` read as the CLI flags they are (a leading `--` is allowed). A
 * flag forkloop does not support is an OptionsError naming it — never silently dropped.
 */
export function withExtraArgs(options: Options): Options {
  const extraArgs = options.extraArgs;
  if (extraArgs === undefined) return options;
  const { extraArgs: _read, ...rest } = options;
  const unsupported = Object.keys(extraArgs).filter((flag) => FLAGS[canonical(flag)] === undefined);
  if (unsupported.length > 0) {
    throw new OptionsError(
      `extraArgs: forkloop does not support ${unsupported.map((flag) => `--${flag.replace(/^--/, "")}`).join(", ")}; the flags it reads are --${EXTRA_ARGS_FLAGS.join(", --")} (or set the matching option).`,
    );
  }
  let expanded: Options = rest;
  for (const [flag, value] of Object.entries(extraArgs)) {
    expanded = (FLAGS[canonical(flag)] as Flag)(value, expanded);
  }
  return expanded;
}

function canonical(flag: string): string {
  const bare = flag.replace(/^--/, "");
  return ALIASES[bare] ?? bare;
}
