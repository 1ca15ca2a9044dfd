import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { apiOutputSchema, closestName, MIN_AUTOCOMPACT_WINDOW_TOKENS } from "@forkloop/loop-core";
import { isPermissionMode, PERMISSION_MODES, SETTING_SOURCES } from "@forkloop/tools";
import { agentsFlag, jsonSchemaFlag } from "./claude-flag-values.js";
import type { Options, PermissionMode, SettingSource } from "./options.js";
import { OptionsError } from "./options-error.js";
import { worktreeBaseSetting } from "./run-environment.js";
import { builtinToolNames, FORK_TOOL_NAMES } from "./tool-selection.js";

/**
 * Claude Code's print-mode flags as typed values: what `forkloop run --X` and `extraArgs: { X }`
 * both mean, read by one mapping (claudeFlagOptions) so a flag means the same in either (R-X3, R-K2).
 */
export type ClaudeFlags = { [Flag in keyof ClaudeFlagValues]?: ClaudeFlagValues[Flag] | undefined };

interface ClaudeFlagValues {
  model: string;
  "fallback-model": string[];
  "max-turns": number;
  "max-budget-usd": number;
  /** Checked here (checkClaudeFlagValues): a mode, or Claude Code's "manual" (forkloop's default). */
  "permission-mode": string;
  "dangerously-skip-permissions": boolean;
  "permission-prompt-tool": string;
  "permission-prompts": NonNullable<Options["permissionPrompts"]>;
  /** `auto` or a window in tokens (autoCompactWindowFlag). */
  autocompact: string;
  "allowed-tools": string[];
  "disallowed-tools": string[];
  tools: string;
  bare: boolean;
  restricted: boolean;
  "safe-mode": boolean;
  "system-prompt": string;
  "append-system-prompt": string;
  "json-schema": string;
  agents: string;
  effort: string;
  "session-id": string;
  "fork-session": boolean;
  "setting-sources": string[];
  settings: string;
  "mcp-config": string[];
  "strict-mcp-config": boolean;
  "add-dir": string[];
  "include-partial-messages": boolean;
  "include-hook-events": boolean;
  "replay-user-messages": boolean;
  "forward-subagent-text": boolean;
}

/** Where the flags were typed: paths they name are relative to `cwd`; `outputFormat` is the run's. */
export interface ClaudeFlagsContext {
  cwd: string;
  outputFormat: "text" | "json" | "stream-json";
}

const EFFORTS: readonly NonNullable<Options["effort"]>[] = ["low", "medium", "high", "xhigh", "max"];

/**
 * R-X3, R-K2: the values `forkloop run` and `extraArgs` refuse alike, before anything starts —
 * the flag, what it takes and the value given (the CLI exits 2 with it).
 */
export function checkClaudeFlagValues(flags: ClaudeFlags): void {
  if (flags.autocompact !== undefined) autoCompactWindowFlag(flags.autocompact);
  const mode = flags["permission-mode"];
  if (mode !== undefined && !isPermissionMode(permissionMode(mode))) {
    throw new OptionsError(
      `--permission-mode: must be one of ${PERMISSION_MODES.join(", ")} (or manual, the same as default), not ${JSON.stringify(mode)}; e.g. --permission-mode acceptEdits.`,
    );
  }
  const effort = flags.effort;
  if (effort !== undefined && !(EFFORTS as readonly string[]).includes(effort)) {
    throw new OptionsError(
      `--effort: must be ${EFFORTS.slice(0, -1).join(", ")} or ${EFFORTS.at(-1)}, not ${JSON.stringify(effort)}; e.g. --effort high.`,
    );
  }
  const unknownSource = flags["setting-sources"]?.find(
    (source) => !(SETTING_SOURCES as readonly string[]).includes(source),
  );
  if (unknownSource !== undefined) {
    throw new OptionsError(
      `--setting-sources: each must be ${SETTING_SOURCES.slice(0, -1).join(", ")} or ${SETTING_SOURCES.at(-1)}, not ${JSON.stringify(unknownSource)}; e.g. --setting-sources user,project ("" reads none).`,
    );
  }
}

/**
 * R-C7: `--autocompact auto|TOKENS` read as Claude Code reads it: `auto` (the model's own window,
 * undefined here), a whole number, `500k`/`1.5m`, or 100–1000 as thousands (`200` is 200k); the
 * window must be at least 100k tokens, else an OptionsError with Claude Code's rule.
 */
function autoCompactWindowFlag(value: string): number | undefined {
  const text = value.trim();
  if (text.toLowerCase() === "auto") return undefined;
  const suffix = text.slice(-1).toLowerCase();
  const unit = suffix === "m" ? 1_000_000 : suffix === "k" ? 1000 : undefined;
  const read = unit === undefined ? Number(text) : Number.parseFloat(text) * unit;
  const tokens = Math.round(unit === undefined && read >= 100 && read <= 1000 ? read * 1000 : read);
  if (text === "" || !Number.isSafeInteger(tokens) || tokens < MIN_AUTOCOMPACT_WINDOW_TOKENS) {
    throw new OptionsError(
      `--autocompact: ${JSON.stringify(value)} is invalid. It must be 'auto', or at least 100k (e.g. 500k, 200000, or 200 as shorthand).`,
    );
  }
  return tokens;
}

/** Claude Code's "manual" is forkloop's "default": anything not allowed by a rule is asked about (denied headless). */
function permissionMode(mode: string): string {
  return mode === "manual" ? "default" : mode;
}

/** The query() options the flags stand for; a flag not given sets nothing; a bad value is an OptionsError. */
export function claudeFlagOptions(flags: ClaudeFlags, context: ClaudeFlagsContext): Partial<Options> {
  checkClaudeFlagValues(flags);
  const { cwd } = context;
  const mcpConfig = flags["mcp-config"];
  const addDirs = flags["add-dir"];
  return {
    ...(flags.model === undefined ? {} : { model: flags.model }),
    ...(flags["fallback-model"] === undefined ? {} : { fallbackModel: flags["fallback-model"] }),
    ...(flags["max-turns"] === undefined ? {} : { maxTurns: flags["max-turns"] }),
    ...(flags["max-budget-usd"] === undefined ? {} : { maxBudgetUsd: flags["max-budget-usd"] }),
    ...(flags["dangerously-skip-permissions"]
      ? { permissionMode: "bypassPermissions" as const, allowDangerouslySkipPermissions: true }
      : flags["permission-mode"] === undefined
        ? {}
        : { permissionMode: permissionMode(flags["permission-mode"]) as PermissionMode }),
    ...(flags["permission-prompt-tool"] === undefined
      ? {}
      : { permissionPromptToolName: flags["permission-prompt-tool"] }),
    ...(flags["permission-prompts"] === undefined ? {} : { permissionPrompts: flags["permission-prompts"] }),
    ...autoCompactWindowOption(flags.autocompact),
    ...(flags["allowed-tools"] === undefined ? {} : { allowedTools: flags["allowed-tools"] }),
    ...toolSetOptions(flags),
    ...(flags.bare ? { bare: true } : {}),
    ...(flags["safe-mode"] ? { safeMode: true } : {}),
    ...(flags["setting-sources"] === undefined
      ? {}
      : { settingSources: flags["setting-sources"] as SettingSource[] }),
    // --restricted, as Claude Code's: no settings files (--settings still applies), no memory files.
    ...(flags.restricted ? { settingSources: [], memoryFiles: false } : {}),
    ...(flags.settings === undefined ? {} : { settings: settingsFlag(flags.settings, cwd) }),
    ...systemPromptOption(flags["system-prompt"], flags["append-system-prompt"]),
    ...(flags["json-schema"] === undefined
      ? {}
      : { outputFormat: { type: "json_schema" as const, schema: outputSchema(flags["json-schema"], cwd) } }),
    ...(flags.agents === undefined ? {} : { agents: agentsFlag(flags.agents, cwd) }),
    ...(flags.effort === undefined ? {} : { effort: flags.effort as NonNullable<Options["effort"]> }),
    ...(flags["session-id"] === undefined ? {} : { sessionId: flags["session-id"].toLowerCase() }),
    ...(flags["fork-session"] ? { forkSession: true } : {}),
    ...(mcpConfig === undefined ? {} : { mcpConfig: mcpConfig.map((value) => mcpConfigFlag(value, cwd)) }),
    ...(flags["strict-mcp-config"] === undefined ? {} : { strictMcpConfig: flags["strict-mcp-config"] }),
    ...(addDirs === undefined ? {} : { additionalDirectories: addDirs.map((dir) => resolve(cwd, dir)) }),
    ...(flags["include-partial-messages"] ? { includePartialMessages: true } : {}),
    // Hook runs are stream-json lines; other formats ignore the flag, as Claude Code does.
    ...(flags["include-hook-events"] && context.outputFormat === "stream-json"
      ? { includeHookEvents: true }
      : {}),
    ...(flags["replay-user-messages"] ? { replayUserMessages: true } : {}),
    ...(flags["forward-subagent-text"] ? { forwardSubagentText: true } : {}),
  };
}

function autoCompactWindowOption(value: string | undefined): Pick<Options, "autoCompactWindow"> {
  const window = value === undefined ? undefined : autoCompactWindowFlag(value);
  return window === undefined ? {} : { autoCompactWindow: window };
}

/**
 * One `--mcp-config` value as query() takes it: JSON as is, a file made absolute against `cwd` —
 * where the command was typed (as --settings and --add-dir), not the run's --cwd.
 */
export function mcpConfigFlag(value: string, cwd: string): string {
  return value.trimStart().startsWith("{") ? value : resolve(cwd, value);
}

/**
 * R-X1: where `--worktree` starts, by the settings files the run reads (all, unless
 * --setting-sources or --restricted narrows them) and `--settings` (Claude Code's
 * `worktree.baseRef`): "head" is local HEAD, else the remote's default branch ("fresh").
 */
export async function worktreeBaseFlag(
  flags: Pick<Partial<ClaudeFlags>, "settings" | "setting-sources" | "restricted">,
  context: {
    readonly cwd: string;
    readonly projectDir: string;
    readonly home: string | undefined;
    readonly trustProject: boolean;
  },
): Promise<"fresh" | "head"> {
  const settings = flags.settings === undefined ? undefined : settingsFlag(flags.settings, context.cwd);
  const flagSettings =
    settings === undefined
      ? undefined
      : typeof settings === "string"
        ? { label: settings, text: await readSettingsFile(settings) }
        : { label: "--settings", text: JSON.stringify(settings) };
  const sources = flags.restricted
    ? []
    : ((flags["setting-sources"] as SettingSource[] | undefined) ?? SETTING_SOURCES);
  return worktreeBaseSetting(context.projectDir, context.home, sources, {
    trustProject: context.trustProject,
    ...(flagSettings === undefined ? {} : { flagSettings }),
  });
}

async function readSettingsFile(path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    throw new OptionsError(
      `--settings ${path}: cannot read it (${(error as NodeJS.ErrnoException).code ?? "error"}); give a settings file or JSON, e.g. --settings '{"model":"opus"}'.`,
    );
  }
}

/** `--settings FILE|JSON`, as Claude Code takes it: JSON text when it starts with `{`, else a file. */
function settingsFlag(value: string, cwd: string): string | Record<string, unknown> {
  if (!value.trimStart().startsWith("{")) return resolve(cwd, value);
  try {
    return JSON.parse(value) as Record<string, unknown>;
  } catch (error) {
    throw new OptionsError(
      `--settings: not valid JSON (${(error as Error).message}); give a settings file or JSON, e.g. --settings '{"model":"opus"}'.`,
    );
  }
}

/**
 * `--system-prompt` replaces the prompt, `--append-system-prompt` adds to it; both: the
 * replacement, then the addition (Claude Code's append flags combine with either replacement).
 */
function systemPromptOption(replacement: string | undefined, append: string | undefined): Partial<Options> {
  if (replacement !== undefined)
    return { systemPrompt: append === undefined ? replacement : `${replacement}\n\n${append}` };
  return append === undefined ? {} : { systemPrompt: { type: "preset", preset: "claude_code", append } };
}

/**
 * `--json-schema`: the request carries the schema with the constraints structured outputs do not
 * support moved into descriptions, as the official SDK's helpers send it (apiOutputSchema); a
 * schema that cannot be sent is an error naming the fix.
 */
function outputSchema(value: string, cwd: string): Record<string, unknown> {
  const schema = jsonSchemaFlag(value, cwd);
  try {
    return apiOutputSchema(schema);
  } catch (error) {
    throw new OptionsError(
      `--json-schema: ${error instanceof Error ? error.message : String(error)}; give a JSON Schema whose type is "object" and whose properties each have a type, e.g. --json-schema '{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}'.`,
    );
  }
}

/**
 * `--restricted` takes out the tools that run code (Bash) or reach the network (WebFetch), as
 * Claude Code's does, unless --tools names them.
 */
const RESTRICTED_OUT = ["Bash", "WebFetch"];

/**
 * `--bare`'s tool set unless --tools names one: Claude Code's minimal mode offers these three. This
 * very array marks the set as bare's default, which an --agent's own tool list replaces
 * (withMainAgent), as Claude Code's `--bare --agent` offers the agent's tools (R-X3).
 */
export const BARE_DEFAULT_TOOLS: readonly string[] = Object.freeze(["Bash", "Edit", "Read"]);

/** `--tools`, `--bare` and `--restricted` with `--disallowed-tools`: the tools offered and taken out. */
function toolSetOptions(flags: ClaudeFlags): Pick<Options, "tools" | "disallowedTools"> {
  const bareDefault = flags.tools === undefined && flags.bare === true;
  const tools = flags.tools ?? (bareDefault ? BARE_DEFAULT_TOOLS.join(",") : undefined);
  const given = flags["disallowed-tools"];
  const selected = tools === undefined ? {} : toolsFlag(tools, given ?? []);
  // --restricted takes out what --tools does not name, beside what the tool set took out.
  const restrictedOut = flags.restricted && flags.tools === undefined ? RESTRICTED_OUT : [];
  const disallowed = [...(selected.disallowedTools ?? given ?? []), ...restrictedOut];
  return {
    ...selected,
    ...(bareDefault ? { tools: BARE_DEFAULT_TOOLS as string[] } : {}),
    ...(given === undefined && disallowed.length === 0 ? {} : { disallowedTools: disallowed }),
  };
}

/**
 * `--tools "Read,Grep"` (or spaces), `""` for none, `default` for every built-in tool. As in
 * Claude Code the list is the whole set: Agent (or Task) is offered only when it is named, and
 * SendMessage too (`--tools Read,Agent` offers Agent and Read alone).
 */
function toolsFlag(value: string, disallowed: readonly string[]): Pick<Options, "tools" | "disallowedTools"> {
  const names = value.split(/[\s,]+/).filter((name) => name !== "");
  if (names.length === 1 && names[0] === "default")
    return { tools: { type: "preset", preset: "claude_code" } };
  const known = [...builtinToolNames(), ...FORK_TOOL_NAMES];
  for (const name of names) {
    if (!known.includes(name)) {
      const suggestion = closestName(name, known);
      throw new OptionsError(
        `--tools: unknown tool "${name}"${suggestion ? ` (did you mean ${suggestion}?)` : ""}; the built-in tools are ${known.join(", ")} ("" for none, "default" for all).`,
      );
    }
  }
  // Task is Agent's former name: naming either offers the tool.
  const named = (tool: string) =>
    names.includes(tool) ||
    ((tool === "Agent" || tool === "Task") && (names.includes("Agent") || names.includes("Task")));
  const removed = FORK_TOOL_NAMES.filter((tool) => !named(tool));
  return {
    tools: names,
    ...(removed.length === 0 ? {} : { disallowedTools: [...disallowed, ...removed] }),
  };
}
