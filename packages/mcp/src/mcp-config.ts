import { readFile } from "node:fs/promises";
import { closestName, lazySchema } from "@forkloop/loop-core";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { z } from "zod";
import { expandEnv } from "./expand-env.js";
import { normalizeMcpName } from "./tool-names.js";

const stringMap = lazySchema(() => z.record(z.string(), z.string()));
/** Per-call timeout in milliseconds (Claude Code's per-server `timeout`). */
const timeout = lazySchema(() => z.number().int().positive().optional());

// Not strict: Claude Code's schemas drop keys they do not know (configs copied from other clients
// carry "disabled", "description", "alwaysAllow" …), so such a server still starts; the dropped
// keys are kept in the entry's `ignoredKeys` for a warning.
const stdioSchema = lazySchema(() =>
  z.object({
    type: z.literal("stdio").optional(),
    command: z.string().min(1),
    args: z.array(z.string()).optional(),
    env: stringMap.optional(),
    timeout,
  }),
);
const remoteSchema = (type: "http" | "sse") =>
  z.object({ type: z.literal(type), url: z.string().min(1), headers: stringMap.optional(), timeout });
const httpSchema = lazySchema(() => remoteSchema("http"));
const sseSchema = lazySchema(() => remoteSchema("sse"));

export type McpStdioServerConfig = z.infer<typeof stdioSchema>;
/** Streamable HTTP. */
export type McpHttpServerConfig = z.infer<typeof httpSchema>;
/** The legacy HTTP+SSE transport (deprecated in favour of Streamable HTTP). */
export type McpSseServerConfig = z.infer<typeof sseSchema>;

/** A server that lives in this process (the SDK's `createSdkMcpServer()`), over an in-memory transport. */
export interface McpSdkServerConfig {
  readonly type: "sdk";
  /** An `McpServer` (or low-level `Server`) of `@modelcontextprotocol/sdk`: anything that connects to a transport. */
  readonly instance: { connect(transport: Transport): Promise<void> };
  readonly timeout?: number;
}

export type McpServerConfig =
  | McpStdioServerConfig
  | McpHttpServerConfig
  | McpSseServerConfig
  | McpSdkServerConfig;

/** Where a server's config came from: errors name it, and trust rules decide by scope. */
export interface McpConfigSource {
  /** `project` is `.mcp.json` (starts processes: project-settings trust applies); `flag` is --mcp-config. */
  readonly scope: "user" | "project" | "local" | "flag" | "sdk";
  readonly file?: string;
}

export interface McpServerEntry {
  readonly name: string;
  readonly config: McpServerConfig;
  readonly source: McpConfigSource;
  /** Keys of the config this reader does not know, dropped (as Claude Code drops them). */
  readonly ignoredKeys?: readonly string[];
}

export type McpConfigResult =
  | { readonly ok: true; readonly servers: readonly McpServerEntry[] }
  | { readonly ok: false; readonly error: string };

type Env = Readonly<Record<string, string | undefined>>;

const FIXES = {
  stdio:
    'a stdio server is {"command": "npx", "args": ["-y", "some-server"], "env": {"KEY": "${KEY}"}, "timeout": 60000}',
  http: 'an http server is {"type": "http", "url": "https://host/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}',
  sse: 'an sse server is {"type": "sse", "url": "https://host/sse", "headers": {…}}',
} as const;

function where(source: McpConfigSource, server?: string): string {
  const file = source.file ?? `${source.scope} MCP config`;
  return server === undefined ? file : `${file}: MCP server "${server}"`;
}

/**
 * `mcpServers` as Claude Code writes it (`.mcp.json`, settings, --mcp-config, the SDK's option), with
 * `${VAR}` / `${VAR:-default}` expanded in command, args, env, url and headers. Every error names
 * the file, the server and the fix.
 */
export function parseMcpServers(value: unknown, source: McpConfigSource, env: Env): McpConfigResult {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return {
      ok: false,
      error: `${where(source)}: "mcpServers" must be an object of server name → config. Fix: write {"mcpServers": {"name": {"command": "…"}}}.`,
    };
  }
  const servers: McpServerEntry[] = [];
  for (const [name, raw] of Object.entries(value)) {
    const parsed = parseServer(name, raw, source, env);
    if (!parsed.ok) return parsed;
    servers.push(parsed.entry);
  }
  const clash = nameClash(servers);
  return clash === undefined ? { ok: true, servers } : { ok: false, error: clash };
}

/** A whole config file: `.mcp.json` or a `--mcp-config` file, `{ "mcpServers": { … } }`. */
export async function readMcpConfigFile(
  file: string,
  scope: McpConfigSource["scope"],
  env: Env,
  options: { missingOk?: boolean } = {},
): Promise<McpConfigResult> {
  const source = { scope, file };
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "unknown error";
    if (code === "ENOENT" && options.missingOk) return { ok: true, servers: [] };
    return { ok: false, error: `${file}: cannot read the MCP config (${code}). Fix: check the path.` };
  }
  return parseMcpConfigText(text, source, env);
}

/** A config's text, `{ "mcpServers": { … } }` (a file's, or `--mcp-config '{…}'`); `source.file` names it. */
export function parseMcpConfigText(text: string, source: McpConfigSource, env: Env): McpConfigResult {
  const file = where(source);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      error: `${file}: not valid JSON (${(error as Error).message}). Fix: correct the syntax; comments and trailing commas are not allowed.`,
    };
  }
  if (typeof json !== "object" || json === null || !("mcpServers" in json)) {
    return {
      ok: false,
      error: `${file}: no "mcpServers" key. Fix: write {"mcpServers": {"name": {"command": "…"}}}.`,
    };
  }
  return parseMcpServers(json.mcpServers, source, env);
}

/** Scopes merged by server name, later lists winning (Claude Code: local > project > user). */
export function mergeMcpServers(...lists: readonly (readonly McpServerEntry[])[]): McpConfigResult {
  const byName = new Map<string, McpServerEntry>();
  for (const list of lists) for (const entry of list) byName.set(entry.name, entry);
  const servers = [...byName.values()];
  const clash = nameClash(servers);
  return clash === undefined ? { ok: true, servers } : { ok: false, error: clash };
}

function parseServer(
  name: string,
  raw: unknown,
  source: McpConfigSource,
  env: Env,
): { ok: true; entry: McpServerEntry } | { ok: false; error: string } {
  const fail = (problem: string, fix: string) => ({
    ok: false as const,
    error: `${where(source, name)}: ${problem}. Fix: ${fix}.`,
  });
  const normalized = normalizeMcpName(name);
  if (name.length === 0) return fail("the server name is empty", "give the server a name");
  if (normalized.includes("__")) {
    // `mcp__<server>__<tool>`: a server name with "__" would make `mcp__a__b` rules ambiguous.
    return fail(
      `the name becomes "${normalized}" in tool names, and "__" separates the server from the tool`,
      `rename it, e.g. "${normalized.replace(/_{2,}/g, "-")}"`,
    );
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return fail("the config is not an object", FIXES.stdio);
  }
  const type = (raw as { type?: unknown }).type;
  const schema =
    type === undefined || type === "stdio"
      ? stdioSchema
      : type === "http"
        ? httpSchema
        : type === "sse"
          ? sseSchema
          : undefined;
  if (schema === undefined) {
    return fail(`unknown type ${JSON.stringify(type)}`, 'use "stdio" (the default), "http" or "sse"');
  }
  if (type === undefined && "url" in raw && !("command" in raw)) {
    return fail("a url without a type", 'add "type": "http" (Streamable HTTP) or "type": "sse" (legacy)');
  }
  const fix = FIXES[type === "http" || type === "sse" ? type : "stdio"];
  const known = Object.keys(schema.shape);
  const ignoredKeys = Object.keys(raw).filter((key) => !known.includes(key));
  for (const key of ignoredKeys) {
    // A near miss of a known key ("arg", "comand", "header") is a typo that would start the
    // server wrong, not a key of another client: refused, with the key it meant.
    const meant = closestName(key, known, 2);
    if (meant !== undefined) return fail(`Unrecognized key: "${key}" (did you mean "${meant}"?)`, fix);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue?.path.length ? ` at ${issue.path.join(".")}` : "";
    return fail(`${issue?.message ?? "invalid config"}${at}`, fix);
  }
  const expanded = expandConfig(parsed.data, env);
  if (!expanded.ok) {
    return fail(
      `\${${expanded.variable}} is not set`,
      `set ${expanded.variable} in the environment (or settings "env"), or write \${${expanded.variable}:-default}`,
    );
  }
  const config = expanded.config;
  if ("url" in config) {
    let url: URL;
    try {
      url = new URL(config.url);
    } catch {
      return fail(`url ${JSON.stringify(config.url)} is not a URL`, fix);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      return fail(`url ${JSON.stringify(config.url)} is not http(s)`, fix);
    }
  }
  return { ok: true, entry: { name, config, source, ...(ignoredKeys.length > 0 ? { ignoredKeys } : {}) } };
}

type FileConfig = McpStdioServerConfig | McpHttpServerConfig | McpSseServerConfig;

function expandConfig(
  config: FileConfig,
  env: Env,
): { ok: true; config: FileConfig } | { ok: false; variable: string } {
  let missing: string | undefined;
  const expand = (text: string): string => {
    const result = expandEnv(text, env);
    if (result.ok) return result.value;
    missing ??= result.variable;
    return "";
  };
  const expandMap = (map: Record<string, string> | undefined) =>
    map === undefined
      ? undefined
      : Object.fromEntries(Object.entries(map).map(([key, value]) => [key, expand(value)]));
  let result: FileConfig;
  if ("command" in config) {
    const env = expandMap(config.env);
    result = {
      ...config,
      command: expand(config.command),
      ...(config.args === undefined ? {} : { args: config.args.map(expand) }),
      ...(env === undefined ? {} : { env }),
    };
  } else {
    const headers = expandMap(config.headers);
    result = { ...config, url: expand(config.url), ...(headers === undefined ? {} : { headers }) };
  }
  return missing === undefined ? { ok: true, config: result } : { ok: false, variable: missing };
}

/** Two servers whose names normalise alike would give their tools the same names. */
function nameClash(servers: readonly McpServerEntry[]): string | undefined {
  const seen = new Map<string, McpServerEntry>();
  for (const entry of servers) {
    const key = normalizeMcpName(entry.name);
    const other = seen.get(key);
    if (other !== undefined) {
      return `${where(entry.source, entry.name)}: its tools would be named like those of server "${other.name}" (${where(other.source)}): both become mcp__${key}__…. Fix: rename one of them.`;
    }
    seen.set(key, entry);
  }
  return undefined;
}
