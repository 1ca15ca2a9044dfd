import { lazySchema } from "@forkloop/loop-core";
import { z } from "zod";
import { existingBackgroundShells } from "../background/background-shells.js";
import { defineTool, toolError } from "../tool-kit.js";

/**
 * Claude Code's TaskStop (R-T4): stops one of this agent's background commands — its whole
 * process tree, gone when the result comes back — by the id Bash returned. `shell_id` is the
 * deprecated KillShell's parameter, still accepted as Claude Code accepts it. A stopped command
 * sends no notification (the model asked for it).
 */
export const taskStopTool = defineTool({
  name: "TaskStop",
  description:
    "\n- Stops a running background task by its ID\n- Takes a task_id parameter identifying the task to stop\n" +
    "- Returns a success or failure status\n- Use this tool when you need to terminate a long-running task\n",
  inputSchema: lazySchema(() =>
    z
      .object({
        task_id: z.string().optional().describe("The ID of the background task to stop"),
        shell_id: z.string().optional().describe("Deprecated: use task_id instead"),
      })
      .strict(),
  ),
  isConcurrencySafe: () => false,
  // It ends only what this agent started; plan mode may stop what it may not start.
  isReadOnly: () => true,
  maxResultSizeChars: 100_000,
  async call(input, context) {
    const id = input.task_id ?? input.shell_id;
    if (id === undefined || id.length === 0) return toolError("Missing required parameter: task_id");
    const shells = existingBackgroundShells(context.agentState);
    const shell = shells?.get(id);
    if (shells === undefined || shell === undefined) return toolError(`No task found with ID: ${id}`);
    if (shell.status !== "running") {
      return toolError(`Task ${id} is not running (status: ${shell.status})`);
    }
    await shells.stop(id);
    const stopped = {
      message: `Successfully stopped task: ${id} (${shell.command})`,
      task_id: id,
      task_type: shell.kind,
      command: shell.command,
    };
    // The same object as the call's structured output (tool_use_result), as Claude Code's (R-K2, R-X1).
    return { content: JSON.stringify(stopped), output: stopped };
  },
});
