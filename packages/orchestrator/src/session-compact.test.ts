import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Brain, RequestRecord, Simulator } from "@forkloop/sim";
import { startSimulator } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentPool } from "./agent-pool.js";
import { createSession } from "./main-session.js";
import {
  forkPrefixDifferences,
  runToEnd,
  type SessionRig,
  startSessionRig,
  testSessionOptions,
} from "./testing/index.js";
import { loadTranscript } from "./transcript.js";

const TASK = "Summarize notes.md for the release";
/** A line of the file that only the old history holds: the summary does not quote it. */
const MARKER = "zebra-quartz-marker";

/** While set, the API refuses a compaction's request (400). */
let refuseCompact = false;

// The simulator's scripted replies: read the file, answer, and a summary that keeps the task.
const brain: Brain = (request) => {
  if (request.querySource === "compact" && refuseCompact) return { content: [], fault: "400" };
  if (request.querySource === "compact") {
    return { content: [{ type: "text", text: `<summary>## Goal\n${TASK}; API names kept.</summary>` }] };
  }
  if (request.lastToolResults.length > 0) return { content: [{ type: "text", text: "notes.md read" }] };
  if (request.lastUserText?.startsWith(TASK)) {
    return { content: [{ type: "tool_use", name: "Read", input: { file_path: "notes.md" } }] };
  }
  return { content: [{ type: "text", text: "continuing from the summary" }] };
};

let sim: Simulator;
let pool: AgentPool;
let dir: string;

let rig: SessionRig<Simulator>;
beforeAll(async () => {
  rig = await startSessionRig(startSimulator({ brain, latency: "none" }), "session-compact");
  ({ sim, pool, dir } = rig);
  const lines = Array.from(
    { length: 300 },
    (_, i) => `line ${i}: ${MARKER} ${"alpha beta gamma ".repeat(6)}`,
  );
  writeFileSync(join(dir, "notes.md"), `${lines.join("\n")}\n`);
});
afterAll(() => rig.close());

function messageRequests(source: string): RequestRecord[] {
  return sim.requests().filter((record) => record.path === "/v1/messages" && record.querySource === source);
}

describe("session.compact (manual /compact)", () => {
  it("R-C4/R-F3: manual compaction runs one cache-safe compact fork, writes a manual compact_boundary, and a resume continues from the summary", async () => {
    const options = testSessionOptions({ baseURL: sim.url, dir, pool });
    const session = await createSession(options);
    expect((await runToEnd(session.run(TASK))).reason).toBe("completed");
    const parent = messageRequests("sdk").at(-1);
    if (!parent) throw new Error("expected the parent's last request");

    const result = await session.compact("keep the API names");
    await session.close();
    if (!result.ok) throw new Error(result.error);
    expect(result.boundary.subtype).toBe("compact_boundary");
    expect(result.boundary.compactMetadata).toMatchObject({ trigger: "manual" });
    expect(result.postTokens).toBeLessThan(result.preTokens);
    expect(result.source).toBe("model");
    expect(result.usage.apiCalls).toBe(1);

    // One compact request, no model turn: the parent's exact prefix + the instruction (R-F3).
    const compacts = messageRequests("compact");
    expect(compacts).toHaveLength(1);
    const compact = compacts[0]!;
    expect(forkPrefixDifferences(parent.rawBody, compact.rawBody)).toEqual([]);
    const lastMessage = (JSON.parse(compact.rawBody) as { messages: unknown[] }).messages.at(-1);
    expect(JSON.stringify(lastMessage)).toContain("keep the API names");
    expect(compact.usage?.cache_read_input_tokens).toBeGreaterThan(0);
    expect(messageRequests("sdk")).toHaveLength(2);

    // The transcript restarts from the boundary; the resumed turn sends the summary, not the file.
    const loaded = await loadTranscript(session.transcriptPath);
    expect(loaded.messages[0]).toMatchObject({ type: "system", subtype: "compact_boundary" });
    // R-V1: the compact fork has its own transcript, linked from the session's (a report child).
    const link = loaded.records.find((record) => record.type === "sub_agent");
    expect(link?.querySource).toBe("compact");
    const fork = await loadTranscript(link?.transcriptPath ?? "");
    expect(fork.start).toMatchObject({ querySource: "compact", parent: { sessionId: session.sessionId } });
    expect(fork.records.filter((record) => record.type === "request")).toMatchObject([{ outcome: "reply" }]);
    const resumed = await createSession({ ...options, resumeSessionId: session.sessionId });
    expect((await runToEnd(resumed.run("What next?"))).reason).toBe("completed");
    await resumed.close();
    const next = messageRequests("sdk").at(-1);
    expect(next?.rawBody).toContain("API names kept.");
    expect(next?.rawBody).toContain("What next?");
    expect(parent.rawBody).toContain(MARKER);
    expect(next?.rawBody).not.toContain(MARKER);
  });

  it("R-X1: a compaction the API refuses (400) fails as data naming the API error in Claude Code's words, status first ('API Error: 400 …')", async () => {
    const session = await createSession(testSessionOptions({ baseURL: sim.url, dir, pool }));
    expect((await runToEnd(session.run(TASK))).reason).toBe("completed");
    refuseCompact = true;
    try {
      const result = await session.compact();
      expect(result.ok).toBe(false);
      if (result.ok) return;
      // The fork's API error crossed the worker boundary with its status.
      expect(result.error).toMatch(/^API Error: 400 \S/);
    } finally {
      refuseCompact = false;
      await session.close();
    }
  });

  it("a session with no messages has nothing to compact: a failure as data, no request", async () => {
    const session = await createSession(testSessionOptions({ baseURL: sim.url, dir, pool }));
    const before = sim.requests().length;
    const result = await session.compact();
    await session.close();
    expect(result).toMatchObject({ ok: false, error: expect.stringContaining("nothing to compact") });
    expect(sim.requests().length).toBe(before);
  });
});
