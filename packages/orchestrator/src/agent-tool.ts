import { lazySchema, resolveModelAlias, type Tool } from "@forkloop/loop-core";
import { z } from "zod";
import { type AgentDefinition, GENERAL_PURPOSE_AGENT } from "./agent-definitions.js";
import type { AgentPool } from "./agent-pool.js";
import { FORK_AGENT } from "./builtin-agent-types.js";
import { OrchestratorError } from "./errors.js";
import { type ForkToolOptions, newAgentId, runForkForTool } from "./fork-tool-support.js";

let loadingMainAgentCallPaths:
  | Promise<
      [
        typeof import("./background-agent.js"),
        typeof import("./movable-fork.js"),
        typeof import("./resume-agent.js"),
      ]
    >
  | undefined;

/**
 * The background, move-to-background and resume paths of the main agent's Agent call, loaded at
 * its first call (R-V2: not with the SDK). One promise for every call, so calls made in one turn
 * go on in the order they were made, as they did when these paths were loaded with the module.
 */
function mainAgentCallPaths() {
  loadingMainAgentCallPaths ??= Promise.all([
    import("./background-agent.js"),
    import("./movable-fork.js"),
    import("./resume-agent.js"),
  ]);
  return loadingMainAgentCallPaths;
}

const agentInputSchema = lazySchema(() =>
  z.object({
    description: z.string().describe("A short (3-5 word) description of the task"),
    prompt: z.string().describe("The task for the sub-agent to perform"),
    subagent_type: z.string().optional().describe("The type of agent to use (default: general-purpose)"),
    // Claude Code's two overrides (R-F1, R-X1); either one makes the sub-agent's requests a cache
    // key of their own, so its prefix is paid uncached (R-F3).
    model: z
      .enum(["sonnet", "opus", "haiku", "fable"])
      .optional()
      .describe(
        "Optional model for this agent (the newest of that family), over the agent type's own model. " +
          "If omitted, the agent type's model, else yours. A model other than yours starts without your prompt cache.",
      ),
    effort: z
      .enum(["low", "medium", "high", "xhigh", "max"])
      .optional()
      .describe(
        "Reasoning effort for this agent. Set it ONLY when the user or your instructions ask that this work run at a " +
          "specific effort; otherwise omit it and the agent runs at your effort.",
      ),
    run_in_background: z
      .boolean()
      .optional()
      .describe(
        "Set to true to run this agent in the background. The call returns at once; you will be notified when it completes.",
      ),
    isolation: z
      .enum(["worktree"])
      .optional()
      .describe(
        'Set to "worktree" to run the agent in its own git worktree of this repository; its changes are merged into this tree when it ends (an overlapping change is reported, not applied).',
      ),
  }),
);

function describeAgents(definitions: readonly AgentDefinition[]): string {
  const lines = definitions.map(
    (definition) =>
      `- ${definition.name}: ${definition.description} (tools: ${definition.tools?.join(", ") ?? "all"}${definition.disallowedTools ? `; not ${definition.disallowedTools.join(", ")}` : ""})`,
  );
  return [
    "Launch a sub-agent that works on a task on its own and reports back once. Sub-agents run in parallel:",
    "call this tool several times in one turn for independent tasks. A fork sub-agent starts from this",
    "conversation; every other agent type (general-purpose, the default, too) starts fresh, with your prompt as",
    "its whole task, so give it everything it needs. Each has its own token budget and history and cannot see",
    "your later messages.",
    "With run_in_background the call returns at once and you are notified (with its report) when it ends;",
    "keep working meanwhile, and stop it with TaskStop if it is no longer needed.",
    "",
    "Available agent types:",
    ...lines,
  ].join("\n");
}

/**
 * The `Agent` tool (alias `Task`, R-F1): each call starts one sub-agent in the pool and returns
 * its report as one tool_result — `fork` as a fork of the parent's exact prefix (R-F3), every other
 * type (general-purpose, the default, the built-in ones and custom agents) as a conversation of its
 * own (R-K3, own-conversation.ts), as Claude Code runs them. Concurrency-safe, so
 * several calls in one turn run in parallel (R-T2). Read-only as far as the parent's permission
 * mode goes: the sub-agent's own tool calls are checked under the same mode and rules.
 */
export function createAgentTool(
  pool: AgentPool,
  definitions: readonly AgentDefinition[],
  options: ForkToolOptions,
): Tool<typeof agentInputSchema> {
  const maxDepth = options.maxDepth ?? 1;
  if (!Number.isInteger(maxDepth) || maxDepth < 1) {
    throw new OrchestratorError("invalid_task", `maxDepth must be an integer of at least 1, got ${maxDepth}`);
  }
  const byName = new Map(definitions.map((definition) => [definition.name, definition]));
  for (const builtin of [GENERAL_PURPOSE_AGENT, FORK_AGENT])
    if (!byName.has(builtin.name)) byName.set(builtin.name, builtin);
  return agentToolAt(1, maxDepth, pool, byName, options);
}

/** The Agent tool whose sub-agents are at `depth` (1 = started by the main agent). */
function agentToolAt(
  depth: number,
  maxDepth: number,
  pool: AgentPool,
  byName: ReadonlyMap<string, AgentDefinition>,
  options: ForkToolOptions,
): Tool<typeof agentInputSchema> {
  // Below the limit, these sub-agents get an Agent of their own (same description and schema,
  // so the tools prefix stays byte-identical, R-F3); at the limit a call to it is refused.
  const nestedAgentTool =
    depth < maxDepth
      ? (agentToolAt(depth + 1, maxDepth, pool, byName, options) as unknown as Tool)
      : undefined;
  return {
    name: "Agent",
    aliases: ["Task"],
    description: describeAgents([...byName.values()]),
    inputSchema: agentInputSchema,
    isConcurrencySafe: () => true,
    isReadOnly: () => true,
    maxResultSizeChars: 100_000,
    async call(input, context) {
      const type = input.subagent_type ?? GENERAL_PURPOSE_AGENT.name;
      const definition = byName.get(type);
      if (!definition) {
        return {
          isError: true,
          content: `Unknown agent type "${type}". Available: ${[...byName.keys()].join(", ")}`,
        };
      }
      const spec = {
        name: "Agent",
        querySource: `agent:${definition.name}`,
        agentType: definition.name,
        description: input.description,
        prompt: input.prompt,
        directive: `${definition.prompt}\n\nYour task (${input.description}):\n${input.prompt}`,
        // R-F3: `fork` continues this conversation; every other type is a conversation of its own (R-K3).
        ...(definition === FORK_AGENT ? {} : { ownConversation: { agentPrompt: definition.prompt } }),
        ...(definition.tools === undefined ? {} : { toolNames: definition.tools }),
        ...(definition.disallowedTools === undefined ? {} : { disallowedTools: definition.disallowedTools }),
        ...(input.model !== undefined
          ? { model: resolveModelAlias(input.model, options.modelEnv) }
          : definition.model === undefined
            ? {}
            : { model: definition.model }),
        ...(input.effort === undefined ? {} : { effort: input.effort }),
        ...(definition.maxTurns === undefined ? {} : { maxTurns: definition.maxTurns }),
        ...(nestedAgentTool === undefined ? {} : { nestedAgentTool }),
        // R-B2: as Claude Code names it, in the call or in the agent's definition.
        ...((input.isolation ?? definition.isolation) === "worktree"
          ? { isolation: "worktree" as const }
          : {}),
      };
      // R-T5: only the main agent's own calls go to the background. A nested call runs in this
      // process for a sub-agent, whose background tasks are not the main agent's: it runs in the
      // foreground, its report the call's result, as before.
      if (depth > 1) return runForkForTool(pool, options, context, spec);
      const [{ startAgentInBackground }, { runMovableFork }, { canResume, registerResume }] =
        await mainAgentCallPaths();
      // R-T5: once finished, the main agent's sub-agent is resumed by a SendMessage to it.
      const resumable = canResume(options, spec);
      const call = { ...spec, agentId: newAgentId(), ...(resumable ? { resumable } : {}) };
      const result = await (input.run_in_background === true
        ? startAgentInBackground(pool, options, context, call)
        : // The main agent's foreground call may be moved to the background while it runs.
          runMovableFork(pool, options, context, call));
      if (resumable && result.isError !== true) registerResume(pool, options, context, call.agentId, call);
      return result;
    },
  };
}
