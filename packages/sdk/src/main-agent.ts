import { resolve } from "node:path";
import { GENERAL_PURPOSE_AGENT, loadAgentDefinitions } from "@forkloop/orchestrator";
import { BARE_DEFAULT_TOOLS } from "./claude-flags.js";
import type { Options } from "./options.js";
import { OptionsError } from "./options-error.js";
import { builtinToolNames, FORK_TOOL_NAMES } from "./tool-selection.js";

/** How the caller spells the choices `mainAgent` names: the CLI's flags, or query()'s options. */
export interface MainAgentWords {
  readonly agent: string;
  readonly agents: string;
  /** How the session is isolated instead. */
  readonly isolate: string;
}

/** `forkloop run --agent`'s words. */
export const CLI_AGENT_WORDS: MainAgentWords = {
  agent: "--agent",
  agents: "--agents",
  isolate:
    "add --worktree [NAME], as with Claude Code (or run it in a worktree you made: git worktree add DIR, then --cwd DIR)",
};
const OPTION_WORDS: MainAgentWords = {
  agent: "agent",
  agents: "the agents option",
  isolate: "run it in a worktree you made (git worktree add DIR, then cwd: DIR)",
};

/** What `--agent NAME` (query()'s `agent`) makes of the main session. */
interface MainAgent {
  /** Replaces forkloop's identity and rules, as the agent's prompt replaces Claude Code's. */
  readonly prompt: string;
  /** The tool set (`--tools` form: built-in names), when the agent names one. */
  readonly tools?: string;
  readonly disallowedTools?: readonly string[];
  readonly model?: string;
  /**
   * R-B2: the definition asks for `isolation: "worktree"`, which isolates a sub-agent (an Agent
   * call of that type) and is not applied to the main session: the line that says so once.
   */
  readonly isolationNotice?: string;
}

/**
 * R-X3 `--agent NAME` (Claude Code 2.1.332, observed): the main session runs as that agent type —
 * its prompt in place of the main system prompt, its tools as the tool set, its model. The type
 * comes from `--agents` or the project's agent files (.claude/agents, .forkloop/agents); one no
 * definition has is exit 2 naming the ones there are.
 */
async function mainAgent(
  name: string,
  given: Readonly<Record<string, NonNullable<Options["agents"]>[string]>> | undefined,
  cwd: string,
  words: MainAgentWords,
  /** R-X2: the run's environment the agent file's `model` alias resolves in. */
  modelEnv: Readonly<Record<string, string | undefined>> = {},
): Promise<MainAgent> {
  const flagged = given?.[name];
  const definition =
    flagged === undefined
      ? (await loadAgentDefinitions(cwd, [], modelEnv)).find((agent) => agent.name === name)
      : { ...flagged, name };
  if (definition === undefined) {
    const known = [
      ...new Set([
        GENERAL_PURPOSE_AGENT.name,
        ...Object.keys(given ?? {}),
        ...(await loadAgentDefinitions(cwd)).map((agent) => agent.name),
      ]),
    ];
    throw new OptionsError(
      `${words.agent}: no agent type "${name}"; define it with ${words.agents} or in .claude/agents/${name}.md (the types here: ${known.join(", ")}).`,
    );
  }
  // The built-in names of its tool list (an MCP server's tools stay offered as they are).
  const known = [...builtinToolNames(), ...FORK_TOOL_NAMES];
  const tools = definition.tools?.filter((tool) => known.includes(tool));
  return {
    prompt: definition.prompt,
    ...(tools === undefined ? {} : { tools: tools.join(",") }),
    ...(definition.disallowedTools === undefined ? {} : { disallowedTools: definition.disallowedTools }),
    ...(definition.model === undefined || definition.model === "inherit" ? {} : { model: definition.model }),
    ...("isolation" in definition && definition.isolation === "worktree"
      ? {
          isolationNotice: `forkloop: ${words.agent} ${name}: its definition's isolation: "worktree" applies when it runs as a sub-agent (an Agent call of type ${name}); as the main session it works in ${cwd} itself, as Claude Code isolates a session only with its own --worktree. To isolate the session, ${words.isolate}.`,
        }
      : {}),
  };
}

/**
 * R-X3 query()'s `agent` (the Agent SDK's) and `forkloop run --agent` (which calls this with the
 * CLI's words, before query()): the one place the main session becomes that agent type — its
 * prompt in place of the system prompt unless one is given (an `append` goes after it), its tools
 * unless `tools` is given, its deny rules beside the options', its model unless `model` is given.
 * The options come back without `agent`: it has been applied, and a second call changes nothing.
 */
export async function withMainAgent(
  options: Options,
  warn: (line: string) => void,
  words: MainAgentWords = OPTION_WORDS,
): Promise<Options> {
  const { agent: name, ...rest } = options;
  if (name === undefined) return options;
  const agent = await mainAgent(
    name,
    options.agents,
    resolve(options.cwd ?? process.cwd()),
    words,
    options.env ?? process.env,
  );
  if (agent.isolationNotice !== undefined) warn(agent.isolationNotice);
  const given = options.systemPrompt;
  const systemPrompt =
    given === undefined
      ? agent.prompt
      : typeof given === "object" && !Array.isArray(given)
        ? given.append === undefined
          ? agent.prompt
          : `${agent.prompt}\n\n${given.append}`
        : given;
  // Its tool list replaces --bare's default set (R-X3: Claude Code's `--bare --agent`), not a chosen one.
  const chosen = options.tools === BARE_DEFAULT_TOOLS ? undefined : options.tools;
  const tools = chosen === undefined ? agent.tools?.split(",") : undefined;
  // Its tool list is the whole set, as --tools reads one: a fork tool it does not name is not offered.
  const named = (tool: string) =>
    tools?.includes(tool) === true ||
    ((tool === "Agent" || tool === "Task") &&
      (tools?.includes("Agent") === true || tools?.includes("Task") === true));
  const denied = [
    ...(agent.disallowedTools ?? []),
    ...(tools === undefined ? [] : FORK_TOOL_NAMES.filter((tool) => !named(tool))),
  ];
  return {
    ...rest,
    systemPrompt,
    ...(tools === undefined ? {} : { tools }),
    ...(denied.length === 0 ? {} : { disallowedTools: [...(options.disallowedTools ?? []), ...denied] }),
    ...(options.model === undefined && agent.model !== undefined ? { model: agent.model } : {}),
  };
}
