/**
 * The simulator of `startup.bench.ts`, in a process of its own so that neither side's figures
 * carry the model's CPU or memory. Every run is asked "startup run N"; its first request is
 * answered with one sub-agent call (Claude Code's Task or forkloop's Agent), the sub-agent's first
 * request with a text, and the parent's next with its report. The moments the first request and
 * the sub-agent's first request arrive go to the bench over IPC (epoch milliseconds, the same
 * clock as the bench's). Anything else a side asks on its own (a title, a quota check) gets a text.
 */
import { type Brain, startSimulator } from "@forkloop/sim";

export type StartupSimMessage =
  | { readonly type: "listening"; readonly url: string }
  | { readonly type: "first_request" | "sub_agent_request"; readonly run: number; readonly at: number };

const send = (message: StartupSimMessage) => process.send?.(message);
const now = () => performance.timeOrigin + performance.now();
const text = (value: string) => ({
  content: [{ type: "text" as const, text: value }],
  adaptiveThinking: false,
});

const brain: Brain = async (request) => {
  const user = request.lastUserText ?? "";
  const subAgent = /Look at part one of run (\d+)\./.exec(user);
  if (subAgent && request.turnIndex === 0) {
    send({ type: "sub_agent_request", run: Number(subAgent[1]), at: now() });
    return text("Part one is fine.");
  }
  const run = /startup run (\d+)/.exec(user);
  if (!run) return text(request.lastToolResults.length > 0 ? "Both parts are fine." : "ok");
  if (request.turnIndex > 0 || request.lastToolResults.length > 0) return text("Both parts are fine.");
  send({ type: "first_request", run: Number(run[1]), at: now() });
  const name = request.toolNames.includes("Agent") ? "Agent" : "Task";
  return {
    content: [
      {
        type: "tool_use",
        name,
        input: {
          description: "part one",
          prompt: `Look at part one of run ${run[1]}.`,
          subagent_type: "general-purpose",
        },
      },
    ],
    adaptiveThinking: false,
  };
};

const sim = await startSimulator({ brain, recordLimit: 100 });
process.on("message", (message) => {
  if (message === "close") void sim.close().then(() => process.exit(0));
});
send({ type: "listening", url: sim.url });
