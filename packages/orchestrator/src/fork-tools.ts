import type Anthropic from "@anthropic-ai/sdk";
import type { Tool } from "@forkloop/loop-core";
import { createBuiltinTools } from "@forkloop/tools";
import type { SubAgentBashOptions } from "./agent-profile.js";
import { parentSideTool } from "./parent-side-tool.js";
import type { SubAgentIo } from "./sub-agent-io.js";
import type { SubAgentTask } from "./sub-agent-types.js";

/**
 * The built-in tools, made once per thread and per (deny rules, Bash options): they keep no state
 * of their own (per-agent state is in `agentState`), and reusing the objects reuses loop-core's
 * per-tool definition cache, which takes JSON-schema generation off every fork's start. The deny
 * rules go in because Grep/Glob/LS must leave out files they hide (e.g. `Read(./.env)`): the
 * permission checker sees only the search's root, not the files it walks. The Bash options carry
 * the parent's sandbox and settings `env` (R-S6, R-S4).
 */
const threadBuiltins = new Map<string, Map<string, Tool>>();

function builtinsFor(denyRules: readonly string[], bash: SubAgentBashOptions): Map<string, Tool> {
  const key = JSON.stringify([denyRules, bash.sandbox ?? null, bash.env ?? null]);
  let builtins = threadBuiltins.get(key);
  if (!builtins) {
    const tools = createBuiltinTools({
      denyRules,
      ...(bash.sandbox === undefined ? {} : { bashSandbox: bash.sandbox }),
      ...(bash.env === undefined ? {} : { bashEnv: bash.env }),
    });
    // R-T6: a worker has no searcher; a sub-agent's WebSearch runs in the parent (its proxy).
    builtins = new Map(tools.filter((tool) => tool.name !== "WebSearch").map((tool) => [tool.name, tool]));
    threadBuiltins.set(key, builtins);
  }
  return builtins;
}

/** The fork's tools: the parent's exact list; built-ins run here, the rest in the parent. */
export function buildForkTools(task: SubAgentTask, io: SubAgentIo): Tool[] {
  const builtins = builtinsFor(task.profile.permissionRules.deny, task.profile.bash);
  const tools: Tool[] = [];
  for (const definition of task.cacheSafeParams.tools) {
    if (!("input_schema" in definition)) continue; // server tools are not executed by us
    const annotations = task.toolAnnotations?.[definition.name];
    tools.push(
      builtins.get(definition.name) ?? parentSideTool(definition as Anthropic.Messages.Tool, io, annotations),
    );
  }
  return tools;
}
