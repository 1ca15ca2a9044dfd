import type { Tool } from "@forkloop/loop-core";
import { lazySchema } from "@forkloop/loop-core";
import { backgroundShellsFor } from "@forkloop/tools";
import { z } from "zod";

const sendMessageInputSchema = lazySchema(() =>
  z
    .object({
      to: z.string().describe("Recipient: a background agent's agentId"),
      message: z.string().describe("The message to send"),
      summary: z.string().optional().describe("A 5-10 word summary shown as a one-line preview"),
      // Claude Code's input; here every background agent already sends one notice when it ends.
      notify_when_idle: z
        .boolean()
        .optional()
        .describe("Accepted for Claude Code's input: you are always notified once when the agent completes"),
    })
    .strict(),
);

/**
 * Claude Code's SendMessage (R-T5), for the main agent's background sub-agents: `to` is the
 * agentId the Agent call returned, `message` reaches the running sub-agent as a user message
 * before its next request (the pool's steering, between its tool turns or as one more turn), so
 * the parent can redirect or add to work in flight. Claude Code 2.1.332 offers it beside Agent
 * with this input (`to`, `message`, `summary`, `notify_when_idle`). A finished sub-agent
 * (foreground or background) is resumed from its saved transcript with the message, as Claude
 * Code does (resume-agent.ts): it runs again in the background under the same id. Waiting for one
 * needs no tool, as in Claude Code: its completion arrives as a task notification, and query()
 * waits for it after the last turn — so `notify_when_idle` (one notice when it next goes idle) is
 * met by construction.
 */
export function createSendMessageTool(): Tool<typeof sendMessageInputSchema> {
  return {
    name: "SendMessage",
    description:
      "Send a message to one of your agents (the agentId its Agent call returned). " +
      "A running agent reads it before its next step; use it to redirect or add to the agent's work. " +
      "An agent that has finished is resumed from its saved transcript with your message and runs in " +
      "the background. You are notified when the agent completes.",
    inputSchema: sendMessageInputSchema,
    isConcurrencySafe: () => true,
    // It writes nothing itself; the agent it messages works under its own permission checks.
    isReadOnly: () => true,
    maxResultSizeChars: 10_000,
    async call(input, context) {
      if (input.message.trim().length === 0) {
        return { isError: true, content: "message is empty: give the text the agent should read" };
      }
      const sent = backgroundShellsFor(context.agentState).send(input.to, input.message);
      if (typeof sent === "string") return { isError: true, content: sent };
      return {
        content: JSON.stringify({
          success: true,
          message: sent.resumed
            ? `Agent ${input.to} had finished; it was resumed from its saved transcript with your message ` +
              "and runs in the background. You will be notified when it completes."
            : `Message sent to ${input.to}; it reads it before its next step.`,
        }),
      };
    },
  };
}
