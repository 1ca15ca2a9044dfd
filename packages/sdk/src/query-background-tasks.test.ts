import type { BrainReply, BrainRequest, RequestRecord } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SDKMessage } from "./messages.js";
import { query } from "./query.js";
import { startHarness } from "./test-support/sdk-harness.js";

const REPORT = "MOVED-REPORT-9";
/** Only a deadlock breaker: the sub-agent answers once the parent's next request came. */
const GATE_FALLBACK_MS = 4_000;

let gate: { release: (by: string) => void; releasedBy: Promise<string> };

const text = (value: string): BrainReply => ({ content: [{ type: "text", text: value }] });

async function subAgent(): Promise<BrainReply> {
  setTimeout(() => gate.release("fallback"), GATE_FALLBACK_MS).unref();
  await gate.releasedBy;
  return text(REPORT);
}

function parent(request: BrainRequest): BrainReply {
  const results = request.lastToolResults.map((result) => result.content).join("\n");
  if (results.includes("Async agent launched successfully.")) {
    // The moved call answered while its sub-agent still runs: this request lets it finish.
    gate.release("parent");
    return text("moved on");
  }
  if ((request.lastUserText ?? "").includes("<task-notification>")) return text("noted");
  if (results.includes(REPORT)) return text("waited for it");
  if (request.turnIndex > 0) return text("nothing more");
  return {
    content: [
      {
        type: "tool_use",
        name: "Agent",
        input: { description: "review notes", prompt: "Review notes.md.", subagent_type: "general-purpose" },
      },
    ],
  };
}

function brain(request: BrainRequest): Promise<BrainReply> | BrainReply | undefined {
  if (request.querySource?.startsWith("agent:")) return subAgent();
  if (request.querySource === "sdk") return parent(request);
  return undefined;
}

describe("R-T5: query().backgroundTasks() moves a running foreground sub-agent to the background", () => {
  let harness: Awaited<ReturnType<typeof startHarness>>;
  beforeAll(async () => {
    harness = await startHarness(brain);
  });
  afterAll(async () => {
    await harness.close();
  });
  const requests = (source: string): RequestRecord[] =>
    harness.sim
      .requests()
      .filter((record) => record.path === "/v1/messages" && record.querySource === source);

  it("R-T5: the Agent call answers at once with the launched notice, the same sub-agent goes on, and its end is a notification", async () => {
    gate = newGate();
    harness.sim.clearRequests();
    const q = query({
      prompt: "review the notes",
      options: harness.options({ allowedTools: ["Agent", "Read"] }),
    });
    const messages: SDKMessage[] = [];
    let moved: boolean | undefined;
    let unmatched: boolean | undefined;
    for await (const message of q) {
      messages.push(message);
      if (message.type === "system" && message.subtype === "task_started" && moved === undefined) {
        unmatched = await q.backgroundTasks("toolu_not_a_call");
        moved = await q.backgroundTasks();
      }
    }
    expect(unmatched).toBe(false);
    expect(moved).toBe(true);
    // The sub-agent answered only because the parent's next request came while it ran.
    expect(await gate.releasedBy).toBe("parent");
    const started = messages.find(
      (message) => message.type === "system" && message.subtype === "task_started",
    ) as {
      task_id: string;
    };
    const main = requests("sdk");
    const launched = main.find((record) => record.rawBody.includes("Async agent launched successfully."));
    // The moved call names the sub-agent that was already running: the same id, one fork request.
    expect(launched?.rawBody).toContain(`agentId: ${started.task_id}`);
    expect(requests("agent:general-purpose")).toHaveLength(1);
    const noticed = main.find((record) => record.rawBody.includes("task-notification"));
    expect(noticed?.rawBody).toContain(`<result>${REPORT}`);
    expect(messages.filter((message) => message.type === "result").at(-1)).toMatchObject({
      subtype: "success",
      result: "noted",
    });
  });
});

function newGate(): typeof gate {
  let release: (by: string) => void = () => {};
  const releasedBy = new Promise<string>((resolve) => {
    release = resolve;
  });
  return { release, releasedBy };
}
