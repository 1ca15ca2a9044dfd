import type { PermissionMode } from "@forkloop/loop-core";
import type { SubAgentBashOptions } from "@forkloop/orchestrator";
import {
  forkloopUserDir,
  heldPoints,
  type SandboxMode,
  type SettingSource,
  type Settings,
} from "@forkloop/tools";
import { type McpServersOnDemand, mcpServersOnDemand } from "./mcp-on-demand.js";
import {
  type McpServerSources,
  type ResolvedMcpServers,
  resolveMcpServers,
  type SessionMcp,
  startSessionMcp,
} from "./mcp-servers.js";
import { type ModelSource, resolveModelSource, withApiKeyHelper } from "./model-endpoint.js";
import { withSettingsRetryEnv } from "./model-retry.js";
import { resolveSandbox } from "./sandbox.js";
import { loadRunSettings, mergeRules } from "./settings.js";
import type { PermissionRules } from "./tool-selection.js";

/** Where a run is resolved: the project, the environment, which settings files, and trust. */
export interface RunEnvironmentInput {
  readonly cwd: string;
  /** The run's environment (`options.env`, the CLI's process environment); HOME and PATH come from it. */
  readonly env: Record<string, string | undefined>;
  readonly settingSources: readonly SettingSource[];
  /** `--trust-project` / `trustProject`; else `forkloop trust` decides (R-S5). */
  readonly trustProject?: boolean | undefined;
  /** Claude Code's `--settings`: one more file, or JSON text, read last and trusted. */
  readonly flagSettings?: { readonly label: string; readonly text: string } | undefined;
  /** Lines for the user: what an untrusted project asked for and did not get, the sandbox's notices. */
  readonly warn: (line: string) => void;
  /** R-X3 `bare` (Claude Code's --bare): an apiKeyHelper counts only from `flagSettings`. */
  readonly bare?: boolean | undefined;
}

/**
 * What `query()`, `forkloop batch` and `forkloop worker` resolve alike around their own options:
 * the settings files, then — each when its caller is ready for it, so a bad settings file still
 * fails before any state exists — the permission rules, Bash's sandbox and env, the MCP servers,
 * and the model endpoint. What it starts (MCP servers, endpoints) `close()` stops: callers close
 * the environment, not each part.
 */
export interface RunEnvironment {
  readonly cwd: string;
  readonly home: string | undefined;
  readonly settings: Settings;
  /**
   * R-R2: the environment of model requests: the settings' FORKLOOP_* deadlines beneath it, and
   * (R-X2) a settings `apiKeyHelper`'s key as ANTHROPIC_API_KEY when it has no key of its own.
   */
  readonly endpointEnv: Record<string, string | undefined>;
  /**
   * R-S6: every agent's Bash (sub-agents' and items' too): the sandbox asked for (option or flag)
   * over the settings', decided for `mode` — unattended runs sandbox when they can — and the
   * settings' `env`. A sandbox that must be on and cannot is an OptionsError now.
   */
  bash(mode: PermissionMode, requested: SandboxMode | undefined, unattended: boolean): SubAgentBashOptions;
  /** R-P1: the settings' allow, ask and deny rules with the caller's own allow and deny after them. */
  rules(own: {
    readonly allow?: readonly string[] | undefined;
    readonly deny?: readonly string[] | undefined;
  }): PermissionRules;
  /** R-M1: the MCP servers of the settings scopes and the caller's own (files, servers, strict). */
  mcpServers(own: Pick<McpServerSources, "configFiles" | "servers" | "strict">): Promise<ResolvedMcpServers>;
  /**
   * The model endpoint (R-R1, R-R2): `extraEnv` (deadline flags) over `endpointEnv`; a relative
   * `FORKLOOP_MODELS` is read from `dir` (default: the run's cwd).
   */
  endpoint(extraEnv?: Record<string, string | undefined>, dir?: string): Promise<ModelSource>;
  /**
   * R-M1: starts `servers` now, in parallel, for every agent of the run (a session and its
   * sub-agents, a batch's items); tools a bare deny rule names are not offered.
   */
  startMcp(
    servers: ResolvedMcpServers,
    options: {
      readonly resultsDir: string;
      readonly deny: readonly string[];
      readonly signal?: AbortSignal | undefined;
    },
  ): Promise<SessionMcp>;
  /** R-M1, R-B1 (`forkloop worker`): `servers`, each started the first time a batch names it. */
  mcpOnDemand(servers: ResolvedMcpServers, options: { readonly resultsDir: string }): McpServersOnDemand;
  /** Stops what this environment started — MCP servers, endpoints — the last started first. */
  close(): Promise<void>;
}

/** Loads the settings files and returns the resolver of everything that depends on them. */
export async function resolveRunEnvironment(input: RunEnvironmentInput): Promise<RunEnvironment> {
  const { cwd, env, warn } = input;
  const home = env.HOME;
  // R-S9: what a sandboxed command still running (in this session's workspace, from any session)
  // may have just created is not read at start; each such file is named once.
  const userDir = forkloopUserDir(env);
  const held = heldPoints([userDir]);
  const settings = await loadRunSettings(cwd, home, input.settingSources, {
    held,
    ...(input.trustProject === undefined ? {} : { trustProject: input.trustProject }),
    ...(input.flagSettings === undefined ? {} : { flagSettings: input.flagSettings }),
    onIgnored: (line) => warn(`forkloop: ${line}`),
  });
  // R-X2: a settings apiKeyHelper's key when the environment has none (once per process, before any request).
  // Under --bare only --settings may name it, as Claude Code's ("apiKeyHelper via --settings").
  const keyHelper =
    input.bare !== true
      ? settings.apiKeyHelper
      : input.flagSettings === undefined
        ? undefined
        : (await loadRunSettings(cwd, home, [], { flagSettings: input.flagSettings })).apiKeyHelper;
  const endpointEnv = await withApiKeyHelper(withSettingsRetryEnv(env, settings.env), keyHelper, cwd);
  // MCP servers see the settings' `env` over the run's.
  const mcpEnv = { ...env, ...settings.env };
  const opened: { close(): Promise<void> }[] = [];
  const started = <T extends { close(): Promise<void> }>(value: T): T => {
    opened.push(value);
    return value;
  };
  return {
    cwd,
    home,
    settings,
    endpointEnv,
    bash: (mode, requested, unattended) => ({
      sandbox: resolveSandbox(requested ?? settings.sandbox, {
        mode,
        unattended,
        path: env.PATH,
        notice: warn,
        home,
        userDir,
      }),
      ...(settings.env === undefined ? {} : { env: settings.env }),
    }),
    rules: (own) => mergeRules(settings, own),
    mcpServers: (own) =>
      resolveMcpServers({
        cwd,
        home,
        env: mcpEnv,
        settingSources: input.settingSources,
        trustProject: input.trustProject,
        configFiles: own.configFiles,
        servers: own.servers,
        strict: own.strict,
        held,
        onIgnored: (line) => warn(`forkloop: ${line}`),
      }),
    endpoint: async (extraEnv = {}, dir = cwd) =>
      started(await resolveModelSource({ ...endpointEnv, ...extraEnv }, warn, dir)),
    startMcp: async (servers, options) =>
      started(
        await startSessionMcp(servers, {
          cwd,
          env: mcpEnv,
          resultsDir: options.resultsDir,
          deny: options.deny,
          warn,
          signal: options.signal,
        }),
      ),
    mcpOnDemand: (servers, options) =>
      started(
        mcpServersOnDemand(servers.entries, { cwd, env: mcpEnv, resultsDir: options.resultsDir, warn }),
      ),
    close: async () => {
      for (const part of opened.splice(0).reverse()) await part.close();
    },
  };
}

/**
 * R-X1: settings' `worktree.baseRef` (Claude Code's), read before the run's environment exists —
 * the worktree `--worktree` makes is the run's cwd: "head" is local HEAD, else "fresh" (the
 * remote's default branch).
 */
export async function worktreeBaseSetting(
  cwd: string,
  home: string | undefined,
  sources: readonly SettingSource[],
  options: {
    readonly trustProject: boolean;
    readonly flagSettings?: { readonly label: string; readonly text: string };
  },
): Promise<"fresh" | "head"> {
  return (await loadRunSettings(cwd, home, sources, options)).worktreeBaseRef === "head" ? "head" : "fresh";
}
