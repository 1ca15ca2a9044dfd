import type { Tool } from "@forkloop/loop-core";
import { backgroundShellsFor } from "@forkloop/tools";
import { z } from "zod";

const sendMessageInputSchema = z
  .object({
    to: z.string().describe("Recipient: a background agent's agentId"),
    message: z.string().describe("The message to send"),
    summary: z.string().optional().describe("A 5-10 word summary shown as a one-line preview"),
  })
  .strict();

/**
 * Claude Code's SendMessage (R-T5), for the main agent's background sub-agents: `to` is the
 * agentId the Agent call returned, `message` reaches the running sub-agent as a user message
 * before its next request (the pool's steering, between its tool turns or as one more turn), so
 * the parent can redirect or add to work in flight. Claude Code 2.1.332 offers it beside Agent
 * with this input (`to`, `message`, `summary`); a finished agent is not resumed here (Claude Code
 * resumes it): the error names its output file. Waiting for one needs no tool, as in Claude Code:
 * its completion arrives as a task notification, and query() waits for it after the last turn.
 */
export function createSendMessageTool(): Tool<typeof sendMessageInputSchema> {
  return {
    name: "SendMessage",
    description:
      "Send a message to one of your running background agents (the agentId its Agent call returned). " +
      "It reads the message before its next step; use it to redirect or add to the agent's work. " +
      "You are notified when the agent completes, as before.",
    inputSchema: sendMessageInputSchema,
    isConcurrencySafe: () => true,
    // It writes nothing itself; the agent it messages works under its own permission checks.
    isReadOnly: () => true,
    maxResultSizeChars: 10_000,
    async call(input, context) {
      if (input.message.trim().length === 0) {
        return { isError: true, content: "message is empty: give the text the agent should read" };
      }
      const problem = backgroundShellsFor(context.agentState).send(input.to, input.message);
      if (problem !== undefined) return { isError: true, content: problem };
      return {
        content: JSON.stringify({
          success: true,
          message: `Message sent to ${input.to}; it reads it before its next step.`,
        }),
      };
    },
  };
}
