import type { PermissionMode } from "@forkloop/loop-core";
import type { SubAgentBashOptions } from "@forkloop/orchestrator";
import type { SandboxMode, SettingSource, Settings } from "@forkloop/tools";
import { type McpServerSources, type ResolvedMcpServers, resolveMcpServers } from "./mcp-servers.js";
import { type ModelSource, resolveModelSource } from "./model-endpoint.js";
import { withSettingsRetryEnv } from "./model-retry.js";
import { resolveSandbox } from "./sandbox.js";
import { loadRunSettings } from "./settings.js";

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
}

/**
 * What `query()`, `forkloop batch` and `forkloop worker` resolve alike around their own options:
 * the settings files, then — each when its caller is ready for it, so a bad settings file still
 * fails before any state exists — Bash's sandbox and env, the MCP servers, and the model endpoint.
 */
export interface RunEnvironment {
  readonly cwd: string;
  readonly home: string | undefined;
  readonly settings: Settings;
  /** R-R2: the environment of model requests: the settings' FORKLOOP_* deadlines beneath it. */
  readonly endpointEnv: Record<string, string | undefined>;
  /**
   * R-S6: every agent's Bash (sub-agents' and items' too): the sandbox asked for (option or flag)
   * over the settings', decided for `mode` — unattended runs sandbox when they can — and the
   * settings' `env`. A sandbox that must be on and cannot is an OptionsError now.
   */
  bash(mode: PermissionMode, requested: SandboxMode | undefined, unattended: boolean): SubAgentBashOptions;
  /** R-M1: the MCP servers of the settings scopes and the caller's own (files, servers, strict). */
  mcpServers(own: Pick<McpServerSources, "configFiles" | "servers" | "strict">): Promise<ResolvedMcpServers>;
  /**
   * The model endpoint (R-R1, R-R2): `extraEnv` (deadline flags) over `endpointEnv`; a relative
   * `FORKLOOP_MODELS` is read from `dir` (default: the run's cwd).
   */
  endpoint(extraEnv?: Record<string, string | undefined>, dir?: string): Promise<ModelSource>;
}

/** Loads the settings files and returns the resolver of everything that depends on them. */
export async function resolveRunEnvironment(input: RunEnvironmentInput): Promise<RunEnvironment> {
  const { cwd, env, warn } = input;
  const home = env.HOME;
  const settings = await loadRunSettings(cwd, home, input.settingSources, {
    ...(input.trustProject === undefined ? {} : { trustProject: input.trustProject }),
    ...(input.flagSettings === undefined ? {} : { flagSettings: input.flagSettings }),
    onIgnored: (line) => warn(`forkloop: ${line}`),
  });
  const endpointEnv = withSettingsRetryEnv(env, settings.env);
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
      }),
      ...(settings.env === undefined ? {} : { env: settings.env }),
    }),
    mcpServers: (own) =>
      resolveMcpServers({
        cwd,
        home,
        env: { ...env, ...settings.env },
        settingSources: input.settingSources,
        trustProject: input.trustProject,
        configFiles: own.configFiles,
        servers: own.servers,
        strict: own.strict,
        onIgnored: (line) => warn(`forkloop: ${line}`),
      }),
    endpoint: (extraEnv = {}, dir = cwd) => resolveModelSource({ ...endpointEnv, ...extraEnv }, warn, dir),
  };
}
