import { listModels } from "@forkloop/loop-core";
import type { MainSession } from "@forkloop/orchestrator";
import type {
  AccountInfo,
  AgentInfo,
  ModelInfo,
  SDKControlInitializeResponse,
  SlashCommand,
} from "./agent-sdk-types/control-types.js";
import type { ModelEndpoint } from "./model-endpoint.js";
import type { Options } from "./options.js";
import { OptionsError } from "./options-error.js";
import { SLASH_COMMANDS } from "./slash-commands.js";
import { FORKLOOP_VERSION } from "./version.js";

/**
 * The Agent SDK's `Query` control methods answered from what a forkloop query knows in-process
 * (query.ts delegates here). Methods that act on Claude Code's process, plugins, settings files
 * or the terminal are refused with an error naming them (`refusedControl`), never ignored.
 */

export function supportedCommands(): SlashCommand[] {
  return SLASH_COMMANDS.map((command) => {
    const [name = "", ...rest] = command.slice(1).split(" ");
    return {
      name,
      description: "Summarize the conversation so far",
      argumentHint: rest.join(" "),
      builtin: true,
    };
  });
}

export function supportedModels(): ModelInfo[] {
  return listModels().map((info) => ({
    value: info.id,
    resolvedModel: info.id,
    displayName: info.id,
    description: `${info.contextWindow.toLocaleString("en")} tokens of context`,
  }));
}

/** The Agent tool's agent types: the built-in one, the options' `agents`, and the project's files once the session has read them. */
export function supportedAgents(options: Options, session: MainSession | undefined): AgentInfo[] {
  const agents = new Map<string, AgentInfo>([
    [
      "general-purpose",
      {
        name: "general-purpose",
        description: "A sub-agent for any self-contained task, with the parent's tools",
      },
    ],
  ]);
  for (const [name, definition] of Object.entries(options.agents ?? {})) {
    agents.set(name, {
      name,
      description: definition.description,
      ...(definition.model === undefined ? {} : { model: definition.model }),
    });
  }
  for (const definition of session?.assembled.agentDefinitions ?? []) {
    if (!agents.has(definition.name)) {
      agents.set(definition.name, {
        name: definition.name,
        description: definition.description,
        ...(definition.model === undefined ? {} : { model: definition.model }),
      });
    }
  }
  return [...agents.values()];
}

/**
 * R-X2: where a running session's key came from when not ANTHROPIC_API_KEY, as Claude Code's
 * init line says it: the settings' apiKeyHelper, or "none" for a gateway's ANTHROPIC_AUTH_TOKEN
 * (a bearer token, not an API key).
 */
export function apiKeySourceOf(endpoint: ModelEndpoint): { apiKeySource?: "apiKeyHelper" | "none" } {
  if (endpoint.keyHelper !== undefined) return { apiKeySource: "apiKeyHelper" };
  return endpoint.auth === "bearer" ? { apiKeySource: "none" } : {};
}

/** Who pays: an API key from the environment, or none (the embedded simulator answers). */
export function accountInfo(options: Options, endpoint?: ModelEndpoint): AccountInfo {
  // R-X2: once a session runs, its endpoint knows a settings apiKeyHelper printed the key (as init says).
  if (endpoint?.keyHelper !== undefined) return { apiKeySource: "apiKeyHelper", apiProvider: "firstParty" };
  const env = options.env ?? process.env;
  const keyed = (env.ANTHROPIC_API_KEY ?? "") !== "";
  return { apiKeySource: keyed ? "ANTHROPIC_API_KEY" : "none", apiProvider: "firstParty" };
}

/** `initializationResult()`: what the session offers; forkloop has one output style and no plugins. */
export function initializeResponse(
  options: Options,
  session: MainSession | undefined,
  endpoint?: ModelEndpoint,
): SDKControlInitializeResponse {
  return {
    commands: supportedCommands(),
    agents: supportedAgents(options, session),
    output_style: "default",
    available_output_styles: ["default"],
    models: supportedModels(),
    account: accountInfo(options, endpoint),
    claude_code_version: FORKLOOP_VERSION,
  };
}

/** Why each Query method forkloop does not implement is refused (README: "Query methods"). */
const REFUSED = {
  setMcpPermissionModeOverride: "MCP tools follow the session's permission mode and rules",
  setMaxThinkingTokens: "thinking is chosen when the query starts (the thinking or maxThinkingTokens option)",
  applyFlagSettings: "settings are read when the query starts (the settings option)",
  updateSettings: "forkloop does not write settings files; edit them, or pass the settings option",
  readFile: "read the file with node:fs (forkloop runs in your process)",
  reloadPlugins: "forkloop loads no plugins",
  seedReadState:
    "what a session has read is its own (Edit and Write need the file read by the Read tool first)",
  reconnectMcpServer: "a failed MCP server is restarted once by itself; start a new query to connect again",
  toggleMcpServer: "MCP servers are chosen when the query starts (mcpServers, strictMcpConfig)",
  readMcpResource: "forkloop offers MCP tools, not resources",
  setMcpServers: "MCP servers are chosen when the query starts (mcpServers, strictMcpConfig)",
  usage_EXPERIMENTAL_MAY_CHANGE_DO_NOT_RELY_ON_THIS_API_YET:
    "each result carries the session's spend (total_cost_usd, modelUsage, and forkloop's subagentUsage)",
} as const;
export type RefusedControl = keyof typeof REFUSED;
export const REFUSED_CONTROLS = Object.keys(REFUSED) as RefusedControl[];

export function refusedControl(method: RefusedControl): never {
  throw new OptionsError(`Query.${method}() is not supported by forkloop: ${REFUSED[method]}.`);
}
