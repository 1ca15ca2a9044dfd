import { getModelInfo, type ModelInfo } from "@forkloop/loop-core";
import type { Brain, RequestRecord, Simulator } from "@forkloop/sim";
import { startSimulator } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentPool } from "./agent-pool.js";
import { createSession, type MainSessionOptions } from "./main-session.js";
import {
  forkPrefixDifferences,
  runToEnd,
  type SessionRig,
  startSessionRig,
  TEST_MODEL,
  testProfile,
  testSessionOptions,
} from "./testing/index.js";
import { loadTranscript } from "./transcript.js";

// R-F3: a turn that STARTS over the auto-compact line is compacted before its first
// request. Window 33.5k, output cap 2k → effective 31.5k, auto-compact line 18.5k (R-C7): the
// first prompt with today's tool definitions stays under it (about 6k tokens of them; a tool's
// schema that grows past the margin moves the compaction into the first turn and this fails).
const WINDOW: readonly ModelInfo[] = [
  { ...getModelInfo(TEST_MODEL), contextWindow: 33_500, maxOutputTokens: 2_000 },
];
/** A word only the first prompt holds: a request that still carries it was not compacted. */
const MARKER = "zebraquartz";
const TASK = "Review the pasted release notes";
/** About 12.4k tokens (12 a line): under the line alone, over it once the reply and the next prompt join. */
const FIRST_PROMPT = `${TASK}:\n${Array.from({ length: 1030 }, (_, i) => `${MARKER} note ${i} alpha beta gamma delta`).join("\n")}`;
/** About 3k tokens, all of it kept verbatim after the summary (the tail is 30% of the line). */
const SECOND_PROMPT = `Now list the risky notes. Criteria:\n${"risk means a breaking change in the public API\n".repeat(300)}`;

const brain: Brain = (request) => {
  if (request.querySource === "compact") {
    return {
      content: [
        {
          type: "text",
          text: `<summary>## Goal and constraints\n${TASK}; now list the risky notes by the criteria: risk means a breaking change in the public API.</summary>`,
        },
      ],
    };
  }
  return { content: [{ type: "text", text: `Reviewed. ${"Noted point. ".repeat(300)}` }] };
};

let sim: Simulator;
let pool: AgentPool;
let dir: string;

let rig: SessionRig<Simulator>;
beforeAll(async () => {
  rig = await startSessionRig(startSimulator({ brain, latency: "none" }), "turn-compact");
  ({ sim, pool, dir } = rig);
});
afterAll(() => rig.close());

function messageRequests(): RequestRecord[] {
  return sim.requests().filter((record) => record.path === "/v1/messages");
}

function sessionOptions(): MainSessionOptions {
  return {
    ...testSessionOptions({ baseURL: sim.url, dir, pool }),
    profile: testProfile({ modelOverrides: WINDOW }),
  };
}

describe("compaction at the start of a turn (R-F3)", () => {
  it("R-C4/R-F3: two text-only turns over the auto-compact line → the second opens with a cache-safe compact request, then sends the compacted history", async () => {
    const session = await createSession(sessionOptions());
    const before = messageRequests().length;
    expect((await runToEnd(session.run(FIRST_PROMPT))).reason).toBe("completed");
    const parent = messageRequests().at(-1)!;
    expect(parent.querySource).toBe("sdk");
    const second = await runToEnd(session.run(SECOND_PROMPT));
    await session.close();
    expect(second.reason).toBe("completed");

    const turn2 = messageRequests().slice(before + 1);
    expect(turn2.map((record) => record.querySource)).toEqual(["compact", "sdk"]);
    const [compact, compacted] = turn2 as [RequestRecord, RequestRecord];
    // The compact request is the turn's own prefix + one instruction: the first turn is a cache read.
    expect(forkPrefixDifferences(parent.rawBody, compact.rawBody)).toEqual([]);
    expect(compact.usage?.cache_read_input_tokens).toBeGreaterThan(10_000);
    expect(compacted.rawBody).toContain("<summary>");
    expect(compacted.rawBody).toContain("Now list the risky notes.");
    expect(compacted.rawBody).not.toContain(MARKER);
    expect(compacted.status).toBe(200);
  });

  it("Ctrl+C on the first request after a compaction — the transcript already holds the compacted history, so a resume sends the summary", async () => {
    const options = sessionOptions();
    const session = await createSession(options);
    expect((await runToEnd(session.run(FIRST_PROMPT))).reason).toBe("completed");
    const interrupt = new AbortController();
    const run = session.run(SECOND_PROMPT, { signal: interrupt.signal });
    let step = await run.next();
    while (!step.done) {
      // The compaction is done; its request has not been answered: interrupt it (Ctrl+C).
      if (step.value.type === "request_start") interrupt.abort("ctrl-c");
      step = await run.next();
    }
    expect(step.value.reason).toBe("aborted_streaming");
    await session.close();

    const loaded = await loadTranscript(session.transcriptPath);
    expect(loaded.messages[0]).toMatchObject({ type: "system", subtype: "compact_boundary" });
    expect(JSON.stringify(loaded.messages)).not.toContain(MARKER);
    const resumed = await createSession({ ...options, resumeSessionId: session.sessionId });
    expect((await runToEnd(resumed.run("Go on."))).reason).toBe("completed");
    await resumed.close();
    const sent = messageRequests().at(-1)!;
    expect(sent.querySource).toBe("sdk");
    expect(sent.rawBody).toContain("<summary>");
    expect(sent.rawBody).not.toContain(MARKER);
  });
});
