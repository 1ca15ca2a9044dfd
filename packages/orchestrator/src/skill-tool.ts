import type { Tool } from "@forkloop/loop-core";
import { lazySchema } from "@forkloop/loop-core";
import { z } from "zod";
import type { AgentPool } from "./agent-pool.js";
import { type ForkToolOptions, runForkForTool } from "./fork-tool-support.js";
import type { Skill } from "./skills.js";

const skillInputSchema = lazySchema(() =>
  z.object({
    skill: z.string().describe("The name of the skill to run"),
    args: z.string().optional().describe("Arguments for the skill"),
  }),
);

/**
 * The `Skill` tool (R-F1): runs a SKILL.md in a fork with its own token budget and history; the
 * parent gets one tool_result. The fork starts from the parent's exact prefix (R-F3).
 */
export function createSkillTool(
  pool: AgentPool,
  skills: readonly Skill[],
  options: ForkToolOptions,
): Tool<typeof skillInputSchema> {
  const byName = new Map(skills.map((skill) => [skill.name, skill]));
  const listing = skills.map((skill) => `- ${skill.name}: ${skill.description}`).join("\n");
  return {
    name: "Skill",
    description: `Run a skill: a packaged procedure carried out by a sub-agent that reports back.\n\nAvailable skills:\n${listing || "(none)"}`,
    inputSchema: skillInputSchema,
    isConcurrencySafe: () => true,
    isReadOnly: () => true,
    maxResultSizeChars: 100_000,
    async call(input, context) {
      const skill = byName.get(input.skill);
      if (!skill) {
        return {
          isError: true,
          content: `Unknown skill "${input.skill}". Available: ${[...byName.keys()].join(", ") || "none"}`,
        };
      }
      const directive = [
        `Run the skill "${skill.name}" (files beside it are in ${skill.dir}).`,
        skill.instructions,
        input.args === undefined ? "" : `Arguments: ${input.args}`,
        "When done, reply with a concise report of the result.",
      ]
        .filter((part) => part.length > 0)
        .join("\n\n");
      return runForkForTool(pool, options, context, {
        name: "Skill",
        querySource: `skill:${skill.name}`,
        directive,
        ...(skill.allowedTools === undefined ? {} : { toolNames: skill.allowedTools }),
      });
    },
  };
}
