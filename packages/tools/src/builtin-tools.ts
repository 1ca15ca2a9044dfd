import type { Tool } from "@forkloop/loop-core";
import type { SandboxPolicy } from "./sandbox/bubblewrap.js";
import { createBashTool } from "./tools/bash.js";
import { editTool } from "./tools/edit.js";
import { createGlobTool } from "./tools/glob.js";
import { createGrepTool, type GrepToolOptions } from "./tools/grep.js";
import { createLsTool } from "./tools/ls.js";
import { notebookEditTool } from "./tools/notebook-edit.js";
import { readTool } from "./tools/read.js";
import { taskStopTool } from "./tools/task-stop.js";
import { todoWriteTool } from "./tools/todo-write.js";
import { createWebFetchTool } from "./tools/web-fetch.js";
import { createWebSearchTool, type WebSearcher } from "./tools/web-search.js";
import { writeTool } from "./tools/write.js";

export interface BuiltinToolsOptions {
  readonly bashDefaultTimeoutMs?: number;
  /** Settings `env`: given to Bash after the model credentials are removed from its environment (R-S4). */
  readonly bashEnv?: Readonly<Record<string, string>>;
  /** R-S6: Bash in bubblewrap. */
  readonly bashSandbox?: SandboxPolicy;
  readonly grepBackend?: GrepToolOptions["backend"];
  /**
   * `permissions.deny` of the settings: Grep, Glob and LS leave out files a path rule denies to
   * them (e.g. `Read(./.env)`), which the permission checker cannot see inside a directory search.
   */
  readonly denyRules?: readonly string[];
  /**
   * R-T6: hosts WebFetch may reach at a private or loopback address (default: the
   * comma-separated FORKLOOP_WEBFETCH_ALLOW_PRIVATE_HOSTS of the environment — the user's, never
   * a project file's). Every other private address is refused.
   */
  readonly webFetchAllowPrivateHosts?: readonly string[];
  /**
   * R-T6: how WebSearch reaches the API's web search (the session's model client). Without it
   * WebSearch is still offered (the tool list is the same everywhere, R-F3) and a call runs
   * where one is given: a worker's sub-agent calls the session's over its parent-side proxy.
   */
  readonly webSearch?: WebSearcher;
}

/** The environment's list of hosts WebFetch may reach at private addresses. */
function privateHostsFromEnvironment(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.FORKLOOP_WEBFETCH_ALLOW_PRIVATE_HOSTS ?? "")
    .split(",")
    .map((host) => host.trim().toLowerCase())
    .filter((host) => host.length > 0);
}

/**
 * The coding tools of R-T3, named exactly as Claude Code's so that settings rules such as
 * `Bash(npm test:*)` and hook matchers such as `Edit|Write` carry over. The order is stable: the
 * tool list is part of the prompt-cache key (R-F3).
 */
export function createBuiltinTools(options: BuiltinToolsOptions = {}): Tool[] {
  const bashOptions = {
    ...(options.bashDefaultTimeoutMs === undefined ? {} : { defaultTimeoutMs: options.bashDefaultTimeoutMs }),
    ...(options.bashEnv === undefined ? {} : { env: options.bashEnv }),
    ...(options.bashSandbox === undefined ? {} : { sandbox: options.bashSandbox }),
  };
  const denied = options.denyRules === undefined ? {} : { denyRules: options.denyRules };
  const grepOptions =
    options.grepBackend === undefined ? denied : { ...denied, backend: options.grepBackend };
  const networkOff = options.bashSandbox?.enabled === true && options.bashSandbox.network !== true;
  return [
    readTool,
    writeTool,
    editTool,
    createGlobTool(denied),
    createGrepTool(grepOptions),
    createLsTool(denied),
    createBashTool(bashOptions),
    todoWriteTool,
    taskStopTool,
    notebookEditTool,
    createWebFetchTool({
      allowPrivateHosts: options.webFetchAllowPrivateHosts ?? privateHostsFromEnvironment(),
      networkOff,
    }),
    createWebSearchTool({
      networkOff,
      ...(options.webSearch === undefined ? {} : { search: options.webSearch }),
    }),
  ];
}
