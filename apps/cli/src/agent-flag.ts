import { GENERAL_PURPOSE_AGENT, loadAgentDefinitions } from "@forkloop/orchestrator";
import { builtinToolNames, FORK_TOOL_NAMES, type Options } from "@forkloop/sdk";
import { CliError } from "./cli-error.js";

/** What `--agent NAME` makes of the main session. */
export interface MainAgent {
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
export async function mainAgent(
  name: string,
  given: Readonly<Record<string, NonNullable<Options["agents"]>[string]>> | undefined,
  cwd: string,
): Promise<MainAgent> {
  const flagged = given?.[name];
  const definition =
    flagged === undefined
      ? (await loadAgentDefinitions(cwd)).find((agent) => agent.name === name)
      : { ...flagged, name };
  if (definition === undefined) {
    const known = [
      ...new Set([
        GENERAL_PURPOSE_AGENT.name,
        ...Object.keys(given ?? {}),
        ...(await loadAgentDefinitions(cwd)).map((agent) => agent.name),
      ]),
    ];
    throw new CliError(
      `--agent: no agent type "${name}"; define it with --agents or in .claude/agents/${name}.md (the types here: ${known.join(", ")}).`,
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
          isolationNotice: `forkloop: --agent ${name}: its definition's isolation: "worktree" applies when it runs as a sub-agent (an Agent call of type ${name}); as the main session it works in ${cwd} itself, as Claude Code isolates a session only with its own --worktree. To isolate the session, run it in a worktree you made (git worktree add DIR, then --cwd DIR).`,
        }
      : {}),
  };
}
