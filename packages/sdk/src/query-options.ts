import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { type ModelAliasEnv, type PermissionMode, resolveModelAlias, type Tool } from "@forkloop/loop-core";
import type { AgentDefinition as ForkloopAgentDefinition, SubAgentBashOptions } from "@forkloop/orchestrator";
import { sessionTranscriptPath } from "@forkloop/orchestrator";
import {
  createBuiltinTools,
  isPermissionMode,
  PERMISSION_MODES,
  permissionModeFacts,
  SETTING_SOURCES,
  type Settings,
} from "@forkloop/tools";
import { checkHookMatchers } from "./hook-callbacks.js";
import { type LoopChoices, resolveLoopChoices, thinkingTurnedOff } from "./loop-choices.js";
import type { ResolvedMcpServers } from "./mcp-servers.js";
import { supportedBetas, TASK_BUDGET_BETA, withBetasEnv } from "./model-endpoint.js";
import { FIRED_HOOK_EVENTS, KNOWN_OPTIONS, type Options } from "./options.js";
import { OptionsError } from "./options-error.js";
import { recordOwnState } from "./owned-state.js";
import { type RunEnvironment, resolveRunEnvironment } from "./run-environment.js";
import { listSessionsIn, newSessionId, savedSession } from "./session-helpers.js";
import { ensureWritableDir, type ProjectState, projectState, sessionsDir } from "./state-dirs.js";
import { customSystemPrompt } from "./system-prompt-option.js";
import { DEFAULT_MODEL, FORK_TOOL_NAMES, type PermissionRules, selectTools } from "./tool-selection.js";

/** Everything a query needs, decided from its options, the settings files and the transcripts. */
export interface ResolvedQuery {
  readonly cwd: string;
  /** Where the project's sessions live (state-dirs.ts). */
  readonly state: ProjectState;
  /** The directory of this session's transcript: where new ones go, or where a resumed one was found. */
  readonly sessionsDir: string;
  readonly sessionId: string;
  /** Where the session's history comes from: a new session, a resumed one, or a copy of one. */
  readonly start: "startup" | "resume" | "fork";
  readonly model: string;
  readonly fallbackModels: readonly string[];
  readonly permissionMode: PermissionMode;
  readonly rules: PermissionRules;
  /** Built-in tools (after `tools` and bare `disallowedTools`); MCP tools join when the servers start. */
  readonly tools: readonly Tool[];
  /** The sandbox and settings `env` Bash was built with, for the sub-agents' Bash too (R-S6). */
  readonly bash: SubAgentBashOptions;
  /** The MCP servers to start with the session (R-M1). */
  readonly mcp: ResolvedMcpServers;
  /** What the run's environment starts (the session's MCP servers) and `close()` stops. */
  readonly environment: Pick<RunEnvironment, "startMcp" | "close">;
  readonly agents: readonly ForkloopAgentDefinition[];
  readonly systemPrompt?: string;
  readonly appendSystemPrompt?: string;
  /** With `bare`: without their hooks. */
  readonly settings: Settings;
  readonly home?: string;
  /** False with `bare`, `safeMode` or `memoryFiles: false`: no memory files in the system prompt. */
  readonly memoryFiles: boolean;
  /**
   * The additional directories' memory files are read (CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD
   * set, as Claude Code reads them; not with `bare` or `safeMode`, even under `memoryFiles: false`).
   */
  readonly additionalDirectoryMemory: boolean;
  /** False with `safeMode`: no skills or agent definitions from disk. */
  readonly skillAndAgentFiles: boolean;
  /** R-K1: the `skills` list: only these skills are the session's (undefined: all). */
  readonly skillNames: readonly string[] | undefined;
  readonly env: Record<string, string | undefined>;
  /**
   * R-X2: what Claude Code's aliases resolve in (`ANTHROPIC_DEFAULT_SONNET_MODEL` …): the settings'
   * `env` beneath the run's, for the session's agent files and its Agent calls' `model`.
   */
  readonly modelEnv: ModelAliasEnv;
  /** Thinking, the tool-use summary model and context editing: options, then settings. */
  readonly loop: LoopChoices;
  /** R-X2: the options or settings turned thinking off (no default thinking). */
  readonly thinkingOff: boolean;
}

/**
 * Validates the options (a problem the caller can fix is an OptionsError naming it and the fix)
 * and resolves them against the settings files and saved sessions. Unknown options produce one
 * warning: the Agent SDK tolerates newer fields, and so does forkloop.
 */
export async function resolveQueryOptions(
  options: Options,
  warn: (line: string) => void,
): Promise<ResolvedQuery> {
  const unknown = Object.keys(options).filter((key) => !KNOWN_OPTIONS.has(key));
  if (unknown.length > 0) {
    warn(`forkloop: ignoring options it does not support yet: ${unknown.join(", ")}`);
  }
  const unfired = Object.keys(options.hooks ?? {}).filter(
    (event) => !(FIRED_HOOK_EVENTS as readonly string[]).includes(event),
  );
  if (unfired.length > 0) {
    warn(
      `forkloop: ignoring hooks for events it does not fire: ${unfired.join(", ")} (it fires ${FIRED_HOOK_EVENTS.join(", ")})`,
    );
  }
  checkHookMatchers(options.hooks ?? {});
  const { cwd, env, run } = await queryRunEnvironment(options, warn);
  const home = run.home;
  // R-X3 `bare` (Claude Code's --bare): the settings files' hooks do not run; the rest of them applies.
  const minimal = options.bare === true || options.safeMode === true;
  const settings = minimal ? { ...run.settings, hooks: {} } : run.settings;
  const permissionMode = options.permissionMode ?? settings.permissions.defaultMode ?? "default";
  if (!isPermissionMode(permissionMode)) {
    throw new OptionsError(`permissionMode "${permissionMode}": use one of ${PERMISSION_MODES.join(", ")}.`);
  }
  checkBypass(permissionMode, options, settings);
  const rules = run.rules({ allow: options.allowedTools, deny: options.disallowedTools });

  const bash = run.bash(permissionMode, options.sandbox, false);
  const tools = baseTools(options.tools, rules.deny, bashToolOptions(bash));
  const mcp = await run.mcpServers({
    configFiles: options.mcpConfig,
    servers: options.mcpServers,
    // safeMode: only the servers the program gives, none from settings, ~/.claude.json or .mcp.json.
    strict: options.strictMcpConfig === true || options.safeMode === true,
  });

  const state = projectState({
    cwd,
    env,
    ...(options.stateDir === undefined ? {} : { stateDir: options.stateDir }),
  });
  const { sessionId, start, dir } = await chooseSession(options, state);
  // Before the first request: a transcript that cannot be written must not cost a turn.
  await ensureWritableDir(
    dir,
    "the session transcript",
    "set FORKLOOP_HOME, or the stateDir option (forkloop run --state-dir), to a writable directory",
  );
  const systemPrompt = options.systemPrompt;
  const custom = customSystemPrompt(systemPrompt);
  // Settings' env beneath the run's, as for every variable Claude Code reads.
  const modelEnv: ModelAliasEnv = { ...settings.env, ...env };
  const alias = (model: string) => resolveModelAlias(model, modelEnv);
  return {
    cwd,
    state,
    sessionsDir: dir,
    sessionId,
    start,
    // Claude Code's aliases (`opus`, `sonnet[1m]`) in options and settings files alike; as in
    // Claude Code, ANTHROPIC_MODEL comes after the option (--model) and before the settings' model.
    model: alias(options.model ?? nonEmpty(env.ANTHROPIC_MODEL) ?? settings.model ?? DEFAULT_MODEL),
    fallbackModels: (options.fallbackModel === undefined
      ? []
      : typeof options.fallbackModel === "string"
        ? [options.fallbackModel]
        : [...options.fallbackModel]
    ).map(alias),
    permissionMode,
    rules,
    tools,
    bash,
    mcp,
    environment: run,
    agents: agentDefinitions(options, modelEnv),
    ...(custom === undefined ? {} : { systemPrompt: custom }),
    ...(typeof systemPrompt === "object" && !Array.isArray(systemPrompt) && systemPrompt.append !== undefined
      ? { appendSystemPrompt: systemPrompt.append }
      : {}),
    settings,
    ...(home === undefined ? {} : { home }),
    memoryFiles: !minimal && options.memoryFiles !== false,
    additionalDirectoryMemory:
      !minimal && envFlag({ ...settings.env, ...env }.CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD),
    skillAndAgentFiles: options.safeMode !== true,
    skillNames: Array.isArray(options.skills) ? options.skills : undefined,
    // R-R2: the settings' FORKLOOP_* deadline variables apply beneath the environment.
    env: run.endpointEnv,
    modelEnv,
    loop: resolveLoopChoices(options, settings, modelEnv),
    thinkingOff: thinkingTurnedOff(options, settings),
  };
}

/**
 * The environment a query with these options runs in: its directory, its variables (the betas
 * asked for added) and what the settings files decide — among it the endpoint's variables, a
 * settings apiKeyHelper's key included (R-X2). `startup()`/`prewarm()` resolve it too, so the
 * runtime they warm is the one the query authenticates with.
 */
export async function queryRunEnvironment(
  options: Options,
  warn: (line: string) => void,
): Promise<{ cwd: string; env: Record<string, string | undefined>; run: RunEnvironment }> {
  // R-L3 `taskBudget`: the API takes output_config.task_budget under its beta, as the Agent SDK sends it.
  const env = withBetasEnv(options.env ?? process.env, [
    ...supportedBetas(options.betas, warn),
    ...(options.taskBudget === undefined ? [] : [TASK_BUDGET_BETA]),
  ]);
  const cwd = resolve(options.cwd ?? process.cwd());
  const flagSettings = await settingsOption(options.settings, cwd);
  const run = await resolveRunEnvironment({
    cwd,
    env,
    settingSources: options.settingSources ?? [],
    trustProject: options.trustProject,
    flagSettings,
    warn,
    bare: options.bare,
  });
  return { cwd, env, run };
}

/** The built-in tools' options for Bash that runs as `bash` says (the main agent's, a batch's). */
export function bashToolOptions(bash: SubAgentBashOptions): Parameters<typeof selectTools>[1] {
  return {
    ...(bash.sandbox === undefined ? {} : { bashSandbox: bash.sandbox }),
    ...(bash.env === undefined ? {} : { bashEnv: bash.env }),
  };
}

/**
 * R-P1 "deny beats bypass": bypassing needs the explicit second switch, as in the Agent SDK, and
 * settings that say `permissions.disableBypassPermissionsMode: "disable"` (an administrator's, or
 * the user's) refuse it outright, as Claude Code does — no flag lifts it.
 */
export function checkBypass(mode: PermissionMode, options: Options, settings: BypassSettings): void {
  if (!permissionModeFacts(mode).dangerous) return;
  refuseDisabledBypass(mode, settings);
  if (options.allowDangerouslySkipPermissions !== true) {
    throw new OptionsError(
      "permissionMode bypassPermissions runs every tool call unchecked: also set allowDangerouslySkipPermissions: true (deny rules still apply), or pick another mode.",
    );
  }
}

/** The one settings key `checkBypass` reads. */
export interface BypassSettings {
  readonly permissions: { readonly disableBypassPermissionsMode?: "disable" };
}

/** Settings that disable bypassPermissions refuse it, whoever asks (a query, a batch, its resume). */
export function refuseDisabledBypass(mode: string, settings: BypassSettings): void {
  const dangerous = isPermissionMode(mode) && permissionModeFacts(mode).dangerous;
  if (dangerous && settings.permissions.disableBypassPermissionsMode === "disable") {
    throw new OptionsError(
      'permission mode bypassPermissions is disabled by the settings (permissions.disableBypassPermissionsMode: "disable"): pick another mode, e.g. acceptEdits or dontAsk with allow rules.',
    );
  }
}

function baseTools(
  selection: Options["tools"],
  deny: readonly string[],
  bash: Parameters<typeof selectTools>[1],
): Tool[] {
  const selected = selectTools(deny, bash);
  if (selection === undefined || !Array.isArray(selection)) return selected;
  const known = createBuiltinTools().map((tool) => tool.name);
  const unknown = selection.filter((name) => !known.includes(name) && !FORK_TOOL_NAMES.includes(name));
  if (unknown.length > 0) {
    throw new OptionsError(
      `tools: unknown tool ${unknown.join(", ")}; the built-in tools are ${known.join(", ")}.`,
    );
  }
  return selected.filter((tool) => selection.includes(tool.name));
}

function agentDefinitions(options: Options, modelEnv: ModelAliasEnv): ForkloopAgentDefinition[] {
  return Object.entries(options.agents ?? {}).map(([name, definition]) => {
    if (!/^[a-zA-Z0-9_-]+$/.test(name)) {
      throw new OptionsError(`agents: "${name}" is not a valid agent name (letters, digits, "-" and "_").`);
    }
    // Both lists go through as written: exact names and MCP forms (mcp__server, mcp__server__*)
    // are resolved against the session's whole tool list when the sub-agent starts (R-M1).
    return {
      name,
      description: definition.description,
      prompt: definition.prompt,
      ...(definition.tools === undefined ? {} : { tools: definition.tools }),
      ...(definition.disallowedTools === undefined ? {} : { disallowedTools: definition.disallowedTools }),
      ...(definition.model === undefined || definition.model === "inherit"
        ? {}
        : { model: resolveModelAlias(definition.model, modelEnv) }),
      ...(definition.maxTurns === undefined ? {} : { maxTurns: definition.maxTurns }),
      source: "code",
    };
  });
}

async function chooseSession(
  options: Options,
  state: ProjectState,
): Promise<{ sessionId: string; start: ResolvedQuery["start"]; dir: string }> {
  let resumeId = options.resume;
  if (resumeId === undefined && options.continue === true) {
    resumeId = (await listSessionsIn(state))[0]?.sessionId;
  }
  if (resumeId === undefined) {
    const sessionId =
      options.sessionId === undefined ? newSessionId() : givenSessionId(options.sessionId, state);
    recordOwnState(state, sessionTranscriptPath(sessionsDir(state), sessionId));
    return { sessionId, start: "startup", dir: sessionsDir(state) };
  }
  if (options.sessionId !== undefined) {
    throw new OptionsError(
      "sessionId names a new session; with resume or continue forkloop keeps the resumed session's id (a fork gets a new one). Drop sessionId.",
    );
  }
  const saved = savedSession(state, resumeId);
  // A fork is a new session: it is written where new sessions go, wherever the original lives.
  if (options.forkSession === true) return { sessionId: resumeId, start: "fork", dir: sessionsDir(state) };
  return { sessionId: resumeId, start: "resume", dir: saved.sessionsDir };
}

/** The `settings` option as settings text: the file it names, or the object itself. */
async function settingsOption(
  option: Options["settings"],
  cwd: string,
): Promise<{ label: string; text: string } | undefined> {
  if (option === undefined) return undefined;
  if (typeof option !== "string") return { label: "the settings option", text: JSON.stringify(option) };
  const path = resolve(cwd, option);
  try {
    return { label: path, text: await readFile(path, "utf8") };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    throw new OptionsError(
      `settings ${path}: cannot read it (${code === "ENOENT" ? "no such file" : code}); give a settings file or the settings as JSON, e.g. '{"model":"sonnet"}'.`,
    );
  }
}

export { SETTING_SOURCES };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The Agent SDK's `sessionId` (`claude --session-id`): a UUID no saved session of the project has. */
function givenSessionId(sessionId: string, state: ProjectState): string {
  if (!UUID.test(sessionId)) throw new OptionsError(`sessionId "${sessionId}" is not a valid UUID.`);
  const id = sessionId.toLowerCase();
  if (existsSync(sessionTranscriptPath(sessionsDir(state), id))) {
    throw new OptionsError(
      `session ID ${id} is already in use; resume it with resume (--resume) or give a new UUID.`,
    );
  }
  return id;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}

/** A variable set to turn something on, as Claude Code reads them (`1`, `true`, `yes`, `on`). */
function envFlag(value: string | undefined): boolean {
  return value !== undefined && ["1", "true", "yes", "on"].includes(value.trim().toLowerCase());
}
