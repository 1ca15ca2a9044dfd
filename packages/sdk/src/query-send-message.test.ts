import type { BrainReply, BrainRequest, RequestRecord } from "@forkloop/sim";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { query } from "./query.js";
import { collectMessages, startHarness } from "./test-support/sdk-harness.js";

const MARKER = "ALSO-CHECK-THE-CHANGELOG-7";
/** Only a deadlock breaker: the sub-agent waits for the parent's message before its tool call. */
const GATE_FALLBACK_MS = 3_000;

let sent: { release: () => void; done: Promise<void> };
let target: "launched" | "unknown" = "launched";

function newGate(): typeof sent {
  let release = () => {};
  const done = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { release, done };
}

const text = (value: string): BrainReply => ({ content: [{ type: "text", text: value }] });
const call = (name: string, input: Record<string, unknown>): BrainReply => ({
  content: [{ type: "tool_use", name, input }],
});

async function subAgent(request: BrainRequest): Promise<BrainReply> {
  if (request.lastToolResults.length === 0) {
    // Mid-work when the message comes: its first step waits for the parent to have sent it.
    setTimeout(sent.release, GATE_FALLBACK_MS).unref();
    await sent.done;
    return call("Read", { file_path: "notes.md" });
  }
  const saw = JSON.stringify(request.body.messages).includes(MARKER);
  return text(saw ? `report: checked the changelog too (${MARKER})` : "report: notes only");
}

function parent(request: BrainRequest): BrainReply {
  const results = request.lastToolResults.map((result) => result.content).join("\n");
  const launch = /agentId: (\S+)/.exec(results);
  if (launch?.[1] !== undefined) {
    // notify_when_idle as Claude Code's model may send it: accepted, and the completion notice is that notice.
    return call("SendMessage", {
      to: target === "launched" ? launch[1] : "agent-nothere",
      message: MARKER,
      notify_when_idle: true,
    });
  }
  if (results.includes("Message sent to") || results.includes("No background agent")) {
    sent.release();
    return text(results.includes("Message sent to") ? "sent" : "could not send");
  }
  if ((request.lastUserText ?? "").includes("<task-notification>")) return text("noted");
  if (request.turnIndex > 0) return text("nothing more");
  return call("Agent", {
    description: "review notes",
    prompt: "Review notes.md.",
    subagent_type: "general-purpose",
    run_in_background: true,
  });
}

function brain(request: BrainRequest): Promise<BrainReply> | BrainReply | undefined {
  if (request.querySource?.startsWith("agent:")) return subAgent(request);
  if (request.querySource === "sdk") return parent(request);
  return undefined;
}

describe("R-T5: SendMessage to a running background sub-agent, over worker threads and the simulator", () => {
  let harness: Awaited<ReturnType<typeof startHarness>>;
  beforeAll(async () => {
    harness = await startHarness(brain);
  });
  beforeEach(() => {
    sent = newGate();
    harness.sim.clearRequests();
  });
  afterAll(async () => {
    await harness.close();
  });

  const requests = (source: string): RequestRecord[] =>
    harness.sim
      .requests()
      .filter((record) => record.path === "/v1/messages" && record.querySource === source);
  const run = () =>
    collectMessages(
      query({
        prompt: "review the notes",
        options: harness.options({ allowedTools: ["Agent", "Read", "SendMessage"] }),
      }),
    );

  it("R-T5: the parent's message reaches the running sub-agent as a user message before its next request, and its report answers it", async () => {
    target = "launched";
    const messages = await run();
    const init = messages.find((message) => message.type === "system" && message.subtype === "init");
    expect((init as { tools: string[] }).tools).toContain("SendMessage");
    const fork = requests("agent:general-purpose");
    // Its first request was sent before the message; the one after its tool call carries it.
    expect(fork[0]?.rawBody).not.toContain(MARKER);
    const after = JSON.parse(fork.at(-1)?.rawBody ?? "{}") as {
      messages: { role: string; content: unknown }[];
    };
    const last = after.messages.at(-1);
    expect(last?.role).toBe("user");
    expect(JSON.stringify(last?.content)).toContain(MARKER);
    // The notice the parent got carries the report that answered the message.
    const noticed = requests("sdk").find((record) => record.rawBody.includes("task-notification"));
    expect(noticed?.rawBody).toContain(`checked the changelog too (${MARKER})`);
    expect(messages.filter((message) => message.type === "result").at(-1)).toMatchObject({
      subtype: "success",
    });
  });

  it("R-T5: a message to an id that is no background agent is a tool error naming the running ones; the agent goes on unmessaged", async () => {
    target = "unknown";
    await run();
    const result = JSON.parse(
      requests("sdk").find((record) => record.rawBody.includes("agent-nothere"))?.rawBody ?? "{}",
    ).messages.at(-1).content[0] as { is_error?: boolean; content: string };
    expect(result.is_error).toBe(true);
    expect(result.content).toMatch(/No background agent with ID: agent-nothere \(running: agent-\w+\)/);
    const noticed = requests("sdk").find((record) => record.rawBody.includes("task-notification"));
    expect(noticed?.rawBody).toContain("report: notes only");
  });
});
