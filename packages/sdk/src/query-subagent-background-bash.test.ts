import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BrainReply, BrainRequest } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SDKMessage } from "./messages.js";
import { query } from "./query.js";
import { streamJsonLineSchema } from "./stream-json.js";
import { collectMessages, startHarness } from "./test-support/sdk-harness.js";

// R-T4, R-X1: a sub-agent's own background Bash, as Claude Code 2.1.332 prints it (the claude-cli
// harness's bash-background-subagent scenario): its task lines are the sub-agent's
// (owned_by_subagent, parent_task_id), its call's answer says the shell ends with the sub-agent's
// final answer, and a shell that ends while that answer is on its way opens no turn after it.

/** Ends only once the sub-agent's last request made the file: while that request is answered. */
const GATED = "while [ ! -e go ]; do sleep 0.05; done; echo hello";

let dir = "";

const text = (value: string): BrainReply => ({ content: [{ type: "text", text: value }] });

async function subAgent(request: BrainRequest): Promise<BrainReply> {
  if (request.turnIndex === 0) {
    return {
      content: [
        {
          type: "tool_use",
          name: "Bash",
          input: { command: GATED, description: "Print a greeting", run_in_background: true },
        },
      ],
    };
  }
  const answer = request.lastToolResults.find((result) => result.content.includes("Command running"));
  if (answer === undefined) return text("Heard of it after my answer.");
  // The shell ends while this last reply is on its way: its notice is queued before the reply comes.
  writeFileSync(join(dir, "go"), "");
  const outputFile = /written to: (\S+\.output)\./.exec(answer.content)?.[1] ?? "";
  while (!readFileSync(outputFile, "utf8").includes("[exited with code 0]")) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return text("Started.");
}

function brain(request: BrainRequest): BrainReply | Promise<BrainReply> | undefined {
  if (request.querySource?.startsWith("agent:")) return subAgent(request);
  if (request.querySource !== "sdk") return undefined;
  if (request.turnIndex > 0) return text("The helper started it.");
  return {
    content: [
      {
        type: "tool_use",
        name: "Agent",
        input: {
          description: "Start greeting",
          prompt: "Start the greeting in the background.",
          subagent_type: "general-purpose",
        },
      },
    ],
  };
}

const system = (messages: readonly SDKMessage[], subtype: string) =>
  messages.filter((message) => message.type === "system" && message.subtype === subtype);

let harness: Awaited<ReturnType<typeof startHarness>>;
beforeAll(async () => {
  harness = await startHarness(brain);
  dir = harness.dir;
});
afterAll(async () => harness?.close());

describe("R-T4, R-X1: a sub-agent's own background Bash", () => {
  it("R-T4, R-X1: its task lines name the sub-agent (owned_by_subagent, parent_task_id), its answer says the shell ends with the sub-agent's final answer, and its end opens no turn after that answer", async () => {
    const messages = await collectMessages(
      query({
        prompt: "Ask a helper to start the greeting.",
        options: harness.options({ allowedTools: ["Bash"] }),
      }),
    );
    for (const message of messages) expect(streamJsonLineSchema.safeParse(message).error).toBeUndefined();

    const [agentTask] = system(messages, "task_started");
    const agentTaskId = (agentTask as { task_id: string }).task_id;
    const answer = messages.find(
      (message) =>
        message.type === "user" &&
        message.parent_tool_use_id !== null &&
        JSON.stringify(message.message.content).includes("Command running in background"),
    );
    if (answer?.type !== "user") throw new Error("no answer to the sub-agent's Bash call");
    const [block] = answer.message.content as {
      type: string;
      tool_use_id: string;
      content: string;
      is_error?: boolean;
    }[];
    // Said outright, as Claude Code's, in its words to a sub-agent.
    expect(block?.is_error).toBe(false);
    expect(block?.content).toContain(
      "If it exits while you are still working you will be notified, but it is terminated when you give your final response and no notification can follow that",
    );
    const shellId = /with ID: (\w+)\./.exec(block?.content ?? "")?.[1];

    expect(system(messages, "background_tasks_changed")).toMatchObject([
      {
        tasks: [
          {
            task_id: shellId,
            task_type: "local_bash",
            description: "Print a greeting",
            parent_task_id: agentTaskId,
          },
        ],
      },
      { tasks: [] },
    ]);
    const shellStarted = system(messages, "task_started").find(
      (message) => (message as { task_id: string }).task_id === shellId,
    );
    expect(shellStarted).toMatchObject({
      owned_by_subagent: true,
      tool_use_id: block?.tool_use_id,
      description: "Print a greeting",
      is_backgrounded: true,
      parent_task_id: agentTaskId,
      task_type: "local_bash",
    });
    const [shellUpdated] = system(messages, "task_updated");
    expect(shellUpdated).toMatchObject({ task_id: shellId, patch: { status: "completed" } });
    const [shellEnded, agentEnded] = system(messages, "task_notification");
    expect(shellEnded).toMatchObject({
      task_id: shellId,
      owned_by_subagent: true,
      tool_use_id: block?.tool_use_id,
      status: "completed",
      summary: 'Background command "Print a greeting" completed (exit code 0)',
    });
    // A background command's notice carries no usage, as Claude Code's.
    expect(shellEnded).not.toHaveProperty("usage");
    // The sub-agent's final answer ended it: the shell's notice opened no turn after it.
    expect(agentEnded).toMatchObject({ task_id: agentTaskId, status: "completed", summary: "Started." });
    const subAgentRequests = harness.sim
      .requests()
      .filter((record) => record.path === "/v1/messages" && record.querySource?.startsWith("agent:"));
    expect(subAgentRequests).toHaveLength(2);
  });
});
