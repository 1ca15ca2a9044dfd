import type { LoopHooks } from "@forkloop/loop-core";
import { type Simulator, startSimulator } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentPool } from "./agent-pool.js";
import { createSession } from "./main-session.js";
import {
  batchItemTask,
  runToEnd,
  type SessionRig,
  startSessionRig,
  testProfile,
  testSessionOptions,
} from "./testing/index.js";

// R-X1: SessionStart's and UserPromptSubmit's context reaches the model where Claude Code 2.1.332
// puts it (claude-cli scenarios hook-session-context, hook-session-context-older-model): after the
// prompt as one `role: "system"` message for a model that takes one, else before the prompt in its
// user turn, a <system-reminder> block each — in a main session and a batch item alike (the one
// agent runner), with the system prompt and tools untouched (R-F3).
const START = "SessionStart hook additional context: START-CTX";
const SUBMIT = "UserPromptSubmit hook success: SUBMIT-CTX";
const hooks: LoopHooks = {
  sessionStart: [async () => ({ additionalContext: [START] })],
  userPromptSubmit: [async () => ({ additionalContext: [SUBMIT] })],
};

interface Body {
  system: unknown;
  tools?: unknown;
  messages: { role: string; content: string | { type: string; text?: string }[] }[];
}

let sim: Simulator;
let pool: AgentPool;
let dir: string;
let rig: SessionRig<Simulator>;
beforeAll(async () => {
  rig = await startSessionRig(
    startSimulator({ brain: () => ({ content: [{ type: "text", text: "ok" }] }) }),
    "prompt-hooks",
  );
  ({ sim, pool, dir } = rig);
});
afterAll(() => rig.close());

/** The main session's first request and a batch item's, both on `model`. */
async function firstRequests(model: string): Promise<{ main: Body; item: Body }> {
  const before = sim.requests().length;
  const profile = testProfile({ model });
  const session = await createSession({
    ...testSessionOptions({ baseURL: sim.url, dir, pool }),
    profile,
    hooks,
  });
  expect((await runToEnd(session.run("Say hello."))).reason).toBe("completed");
  const item = pool.run(batchItemTask(session, dir, `item-${model}`, profile), { hooks });
  expect((await item.result).status).toBe("completed");
  await session.close();
  const bodies = sim
    .requests()
    .slice(before)
    .filter((r) => r.path === "/v1/messages" && r.status === 200)
    .map((r) => ({ source: r.querySource, body: JSON.parse(r.rawBody) as Body }));
  const main = bodies.find((b) => b.source === "sdk")?.body;
  const batch = bodies.find((b) => b.source === "batch")?.body;
  if (main === undefined || batch === undefined) throw new Error("no main or batch request");
  return { main, item: batch };
}

/** Each message as role and texts (cache markers aside). */
function shape(body: Body): { role: string; texts: string[] }[] {
  return body.messages.map((m) => ({
    role: m.role,
    texts: typeof m.content === "string" ? [m.content] : m.content.map((block) => block.text ?? block.type),
  }));
}

describe("R-X1: SessionStart's and UserPromptSubmit's context, placed as Claude Code places it", () => {
  it("R-X1, R-F3: a model that takes system messages gets the prompt, then one system message with both texts — main session and batch item; the system prompt and tools are the main session's", async () => {
    const { main, item } = await firstRequests("claude-opus-4-8");
    expect(shape(main)).toEqual([
      { role: "user", texts: ["Say hello."] },
      { role: "system", texts: [`${START}\n\n${SUBMIT}`] },
    ]);
    expect(shape(item)).toEqual([
      { role: "user", texts: [`Sub-agent item-claude-opus-4-8: go.`] },
      { role: "system", texts: [`${START}\n\n${SUBMIT}`] },
    ]);
    expect(JSON.stringify([item.system, item.tools])).toBe(JSON.stringify([main.system, main.tools]));
  }, 60_000);

  it("R-X1: a model without system messages gets each text before the prompt in its turn, a <system-reminder> block each — main session and batch item", async () => {
    const { main, item } = await firstRequests("claude-sonnet-4-6");
    const reminders = [START, SUBMIT].map((text) => `<system-reminder>\n${text}\n</system-reminder>`);
    expect(shape(main)).toEqual([{ role: "user", texts: [...reminders, "Say hello."] }]);
    expect(shape(item)).toEqual([
      { role: "user", texts: [...reminders, "Sub-agent item-claude-sonnet-4-6: go."] },
    ]);
  }, 60_000);
});
