import type { LoopEvent, Tool } from "@forkloop/loop-core";
import type { AgentPool } from "./agent-pool.js";
import { createAgentTool } from "./agent-tool.js";
import type { ForkToolOptions } from "./fork-tool-support.js";
import { createSendMessageTool } from "./send-message-tool.js";
import type { AssembledSession } from "./session-assembly.js";
import { createSkillTool } from "./skill-tool.js";

/** The tools whose calls fork: a session that has one warms the pool's first thread early (R-V2). */
export const FORK_TOOL_NAMES: ReadonlySet<string> = new Set(["Agent", "Skill"]);

/** The reply has begun a call of a fork tool: its input is still streaming. */
export function startsForkCall(event: LoopEvent): boolean {
  if (event.type !== "stream_event" || event.event.type !== "content_block_start") return false;
  const block = event.event.content_block;
  return block.type === "tool_use" && FORK_TOOL_NAMES.has(block.name);
}

/**
 * The main agent's tools: its own, then `Agent` (with `SendMessage` for its background sub-agents)
 * and (with skills) `Skill`, which fork sub-agents
 * into the pool — unless a bare deny rule removed them, as for built-ins.
 */
export function withForkTools(
  tools: readonly Tool[],
  pool: AgentPool,
  assembled: Pick<AssembledSession, "agentDefinitions" | "skills">,
  options: ForkToolOptions,
  removedTools: readonly ("Agent" | "SendMessage" | "Skill")[] = [],
): Tool[] {
  const removed = new Set(removedTools);
  const all: Tool[] = [...tools];
  if (!removed.has("Agent")) {
    all.push(createAgentTool(pool, assembled.agentDefinitions, options) as unknown as Tool);
    // R-T5: messages to the background sub-agents Agent starts, beside it as in Claude Code,
    // unless removed on its own (R-X3: `--tools Read,Agent` offers Agent alone).
    if (!removed.has("SendMessage")) all.push(createSendMessageTool() as unknown as Tool);
  }
  if (assembled.skills.length > 0 && !removed.has("Skill"))
    all.push(createSkillTool(pool, assembled.skills, options) as unknown as Tool);
  return all;
}
