import { realpathSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Tool } from "@forkloop/loop-core";
import {
  connectMcpServers,
  describeMcpNotice,
  type McpConfigResult,
  type McpConfigSource,
  type McpConnections,
  type McpServerEntry,
  type McpServerStatus,
  mcpLimitsFromEnv,
  mcpToolPrefix,
  mergeMcpServers,
  parseMcpConfigText,
  parseMcpServers,
  readMcpConfigFile,
} from "@forkloop/mcp";
import {
  CONFIG_FILE_MAX_BYTES,
  type HeldPoints,
  isProjectTrusted,
  mcpServerPrefix,
  readProjectFile,
  type SettingSource,
  settingsFilePaths,
  toolEnvironment,
  toolNameMatches,
} from "@forkloop/tools";
import type { McpServerConfig } from "./options.js";
import { OptionsError } from "./options-error.js";
import { mcpServerOf } from "./sdk-mcp-server.js";

type Env = Readonly<Record<string, string | undefined>>;

/** Where a session's MCP servers come from (R-M1). */
export interface McpServerSources {
  readonly cwd: string;
  readonly home?: string | undefined;
  /** `${VAR}` expansion (the environment with the settings' `env` over it). */
  readonly env: Env;
  /** The settings sources read: `user` and `local` give settings' `mcpServers`, `project` gives `.mcp.json`. */
  readonly settingSources: readonly SettingSource[];
  /** `--trust-project` / the SDK's `trustProject`; else `forkloop trust` decides. */
  readonly trustProject?: boolean | undefined;
  /** `--mcp-config FILE…` (forkloop's `mcpConfig` option). */
  readonly configFiles?: readonly string[] | undefined;
  /** The SDK's `mcpServers` option. */
  readonly servers?: Readonly<Record<string, McpServerConfig>> | undefined;
  /** `--strict-mcp-config`: only the config files and the `mcpServers` option, no settings scopes. */
  readonly strict?: boolean | undefined;
  /** Files running sandboxed commands may still create (R-S9): skipped, said once. */
  readonly held?: HeldPoints | undefined;
  readonly onIgnored?: ((line: string) => void) | undefined;
}

/** The servers to connect, in-process ones (`createSdkMcpServer`, an `McpServer`) included. */
export interface ResolvedMcpServers {
  readonly entries: readonly McpServerEntry[];
}

/**
 * Claude Code's scopes, lowest precedence first: user settings, the project's `.mcp.json`, local
 * settings, then `--mcp-config` files and the SDK's option. The project's files (`.mcp.json` and
 * `.local` settings) start processes, so they count as project settings for the trust rules
 * (R-S5): an untrusted project's servers are not started, and the line says how to allow them.
 * A bad config is an OptionsError naming the file, the server and the fix (exit 2).
 */
export async function resolveMcpServers(sources: McpServerSources): Promise<ResolvedMcpServers> {
  const limits = mcpLimitsFromEnv(sources.env);
  if (!limits.ok) throw new OptionsError(limits.error);
  const lists: McpServerEntry[][] = [];
  const strict = sources.strict === true;
  const trusted =
    sources.trustProject === true ||
    (sources.home !== undefined && isProjectTrusted(sources.cwd, sources.home));
  const ignored: string[] = [];
  const scoped = async (scope: "user" | "local", files: readonly string[]) => {
    for (const file of files) {
      const servers = await settingsServers(
        file,
        scope,
        sources.home ?? sources.cwd,
        sources.cwd,
        sources.env,
        sources.held,
      );
      if (servers.length === 0) continue;
      if (scope === "local" && !trusted) ignored.push(describeIgnored(file, servers));
      else lists.push(servers);
    }
  };
  const claudeJson = sources.home === undefined ? undefined : join(sources.home, ".claude.json");
  if (!strict && claudeJson !== undefined && sources.settingSources.includes("user")) {
    // `claude mcp add --scope user` writes ~/.claude.json; forkloop's settings files may say it too.
    lists.push(await claudeJsonServers(claudeJson, "user", sources, ignored));
    await scoped("user", settingsFilePaths(sources.cwd, sources.home!, ["user"]));
  }
  if (!strict && sources.settingSources.includes("project")) {
    const file = join(sources.cwd, ".mcp.json");
    // R-S8: read as Read reads a file, inside the project; a refused one starts nothing and says why.
    const read = readProjectFile(file, {
      roots: [sources.cwd],
      maxBytes: CONFIG_FILE_MAX_BYTES,
      what: "MCP config",
      ...(sources.held === undefined ? {} : { held: sources.held }),
    });
    if (read.status === "refused") ignored.push(read.message.replace(/^forkloop: /, ""));
    const text = read.status === "read" ? read.text : '{"mcpServers":{}}';
    const project = checked(parseMcpConfigText(text, { scope: "project", file }, sources.env));
    if (project.length > 0 && !trusted) ignored.push(describeIgnored(file, project));
    else lists.push(project);
  }
  if (!strict && sources.home !== undefined && sources.settingSources.includes("local")) {
    const userFiles = new Set(settingsFilePaths(sources.cwd, sources.home, ["user"]));
    await scoped(
      "local",
      settingsFilePaths(sources.cwd, sources.home, ["local"]).filter((file) => !userFiles.has(file)),
    );
    // `claude mcp add` (local scope) keeps the project's servers in the user's own ~/.claude.json.
    if (claudeJson !== undefined) lists.push(await claudeJsonServers(claudeJson, "local", sources, ignored));
  }
  for (const file of sources.configFiles ?? []) {
    lists.push(checked(await flagConfig(file, sources.cwd, sources.env)));
  }
  const option: McpServerEntry[] = [];
  for (const [name, config] of Object.entries(sources.servers ?? {})) {
    if (config.type === "sdk" && "tools" in config) {
      // createSdkMcpServer's: this query connects a copy (an McpServer serves one connection).
      // Not `...config`: reading createSdkMcpServer's `instance` would load the MCP server twice.
      const instance = await mcpServerOf({ name, version: config.version, tools: config.tools });
      option.push({ name, config: { type: "sdk", instance }, source: { scope: "sdk" } });
    } else if (config.type === "sdk") {
      option.push({ name, config, source: { scope: "sdk" } });
    } else {
      option.push(...checked(parseMcpServers({ [name]: config }, { scope: "sdk" }, sources.env)));
    }
  }
  lists.push(option);
  const merged = checked(mergeMcpServers(...lists));
  for (const entry of merged) if (entry.ignoredKeys) ignored.push(describeIgnoredKeys(entry));
  for (const line of ignored) sources.onIgnored?.(line);
  return { entries: merged };
}

/** A `--mcp-config` value: a file, or (as Claude Code takes it) the JSON itself. */
function flagConfig(value: string, cwd: string, env: Env): Promise<McpConfigResult> | McpConfigResult {
  if (!value.trimStart().startsWith("{")) return readMcpConfigFile(resolve(cwd, value), "flag", env);
  return parseMcpConfigText(value, { scope: "flag", file: "--mcp-config (JSON)" }, env);
}

function checked(result: McpConfigResult): McpServerEntry[] {
  if (!result.ok) throw new OptionsError(`bad MCP config: ${result.error}`);
  return [...result.servers];
}

function describeIgnored(file: string, servers: readonly McpServerEntry[]): string {
  const names = servers.map((server) => server.name).join(", ");
  return `${file}: ignored MCP servers (${names}) — they would start processes and the project is not trusted; run \`forkloop trust <dir>\` or pass --trust-project to use them.`;
}

function describeIgnoredKeys(entry: McpServerEntry): string {
  const keys = (entry.ignoredKeys ?? []).map((key) => JSON.stringify(key)).join(", ");
  const file = entry.source.file ?? `${entry.source.scope} MCP config`;
  return `${file}: MCP server "${entry.name}": ignored unknown keys ${keys} (as Claude Code does); the server starts without them.`;
}

/** Claude Code's ~/.claude.json: `mcpServers` (user scope), `projects[<cwd>].mcpServers` (local scope). */
async function claudeJsonServers(
  file: string,
  scope: "user" | "local",
  sources: McpServerSources,
  ignored: string[],
): Promise<McpServerEntry[]> {
  const { cwd, env } = sources;
  let json: { mcpServers?: unknown; projects?: Record<string, { mcpServers?: unknown }> };
  const read = readUserOwnJson(file, cwd, scope, sources.held);
  if (read.status === "missing") return [];
  if (read.status === "refused" && read.heldBy !== undefined) {
    // Said once, for the user scope (the local scope reads the same file).
    if (scope === "user" || !sources.settingSources.includes("user"))
      ignored.push(read.message.replace(/^forkloop: /, ""));
    return [];
  }
  if (read.status === "refused") {
    throw new OptionsError(`bad MCP config: ${file}: cannot be used: ${read.reason}. Fix: ${read.fix}.`);
  }
  try {
    json = JSON.parse(read.text);
  } catch (error) {
    throw new OptionsError(
      `bad MCP config: ${file}: cannot be read as JSON (${(error as Error).message}). Fix: correct or remove it.`,
    );
  }
  const value =
    scope === "user"
      ? json?.mcpServers
      : (json?.projects?.[cwd] ?? json?.projects?.[realpathOr(cwd)])?.mcpServers;
  if (value === undefined) return [];
  return checked(parseMcpServers(value, { scope, file }, env));
}

/** `~/.claude.json`: the user's own, inside their home; Claude Code keeps history in it, so it may be large. */
function readUserOwnJson(file: string, cwd: string, scope: "user" | "local", held: HeldPoints | undefined) {
  const home = dirname(file);
  return readProjectFile(file, {
    roots: [home],
    maxBytes: 64 * CONFIG_FILE_MAX_BYTES,
    what: scope === "user" ? "user MCP config" : `MCP config of ${cwd}`,
    ...(held === undefined ? {} : { held }),
  });
}

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** A settings file's `mcpServers` (the file was already validated as settings). */
async function settingsServers(
  file: string,
  scope: "user" | "local",
  home: string,
  cwd: string,
  env: Env,
  held: HeldPoints | undefined,
): Promise<McpServerEntry[]> {
  let json: unknown;
  const read = readProjectFile(file, {
    roots: [scope === "user" ? home : cwd],
    maxBytes: CONFIG_FILE_MAX_BYTES,
    what: "settings file",
    ...(held === undefined ? {} : { held }),
  });
  try {
    if (read.status !== "read") return []; // missing, held, or already refused by the settings loader
    json = JSON.parse(read.text);
  } catch {
    return []; // already reported by the settings loader
  }
  if (typeof json !== "object" || json === null || !("mcpServers" in json)) return [];
  const source: McpConfigSource = { scope, file };
  return checked(parseMcpServers(json.mcpServers, source, env));
}

/** A session's MCP servers, started: their tools, live statuses and one close. */
export interface SessionMcp {
  readonly tools: readonly Tool[];
  status(): { name: string; status: McpServerStatus["status"]; error?: string }[];
  close(): Promise<void>;
}

/**
 * Where a server came from, as the Agent SDK's `mcp_servers[].source` says it: `sdk` for an
 * in-process server the program serves, `dynamic` for one the program or `--mcp-config` names,
 * else the settings scope (`user`, `project`, `local`).
 */
export function mcpServerSource(entry: McpServerEntry): string {
  if (entry.config.type === "sdk") return "sdk";
  return entry.source.scope === "sdk" || entry.source.scope === "flag" ? "dynamic" : entry.source.scope;
}

/**
 * What a stdio server starts with (R-S13): the environment Bash gets — no model credentials
 * (`ANTHROPIC_API_KEY`, `ANTHROPIC_AUTH_TOKEN` …, tools' list) — then the server's own config
 * `env`, which may name one on purpose (`"env": { "ANTHROPIC_API_KEY": "${ANTHROPIC_API_KEY}" }`).
 */
export function mcpServerEnvironment(env: Env): Env {
  return toolEnvironment(env);
}

/**
 * Starts the session's servers in parallel (R-M1): a server that fails is reported on
 * `warn` with its reason and its status is `failed`; the session goes on without it. Results too
 * large to show are saved under `resultsDir`. Tools a bare deny rule names (`mcp__memory`,
 * `mcp__memory__*`, an exact name) are not offered at all, as a bare built-in deny removes the tool.
 */
export async function startSessionMcp(
  servers: ResolvedMcpServers,
  options: {
    readonly cwd: string;
    readonly env: Env;
    readonly resultsDir: string;
    readonly deny: readonly string[];
    readonly warn: (line: string) => void;
    /** The session's stop: servers still starting give up at once. */
    readonly signal?: AbortSignal | undefined;
  },
): Promise<SessionMcp> {
  const limits = mcpLimitsFromEnv(options.env);
  if (!limits.ok) throw new OptionsError(limits.error);
  const connections: McpConnections | undefined =
    servers.entries.length === 0
      ? undefined
      : await connectMcpServers(servers.entries, {
          cwd: options.cwd,
          env: mcpServerEnvironment(options.env),
          limits: limits.limits,
          resultsDir: options.resultsDir,
          onNotice: (notice) => options.warn(`forkloop: ${describeMcpNotice(notice)}`),
          signal: options.signal,
        });
  return {
    tools: offeredMcpTools(connections?.tools ?? [], options.deny),
    status: () =>
      (connections?.status() ?? []).map((server: McpServerStatus) => ({
        name: server.name,
        status: server.status,
        ...(server.error === undefined ? {} : { error: server.error }),
      })),
    close: async () => {
      await connections?.close();
    },
  };
}

/** The tools no bare deny rule (`mcp__memory`, `mcp__memory__*`, an exact name) removes. */
export function offeredMcpTools(tools: readonly Tool[], deny: readonly string[]): Tool[] {
  const removed = deny.filter((rule) => !rule.includes("("));
  return tools.filter((tool) => !removed.some((rule) => toolNameMatches(rule, tool.name)));
}

/** A server by name and transport: what a queued batch stores instead of its config. */
export interface NamedMcpServer {
  readonly name: string;
  readonly transport: "stdio" | "http" | "sse" | "sdk";
}

/**
 * The configured servers a queued batch's items may use (R-M1, R-B1), by name only: a
 * server's config starts processes and carries URLs and headers, so it never goes to Redis; each
 * worker starts the server of that name from its own configuration. A server a bare deny rule
 * removes whole (`mcp__db`, `mcp__db__*`) is left out: no worker needs it.
 */
export function namedMcpServers(servers: ResolvedMcpServers, deny: readonly string[]): NamedMcpServer[] {
  const removed = new Set(deny.filter((rule) => !rule.includes("(")).map(mcpServerPrefix));
  return servers.entries
    .filter((entry) => !removed.has(mcpToolPrefix(entry.name)))
    .map((entry) => ({ name: entry.name, transport: entry.config.type ?? "stdio" }));
}
