import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import type { Tool } from "@forkloop/loop-core";
import type { Brain, RequestRecord, Simulator } from "@forkloop/sim";
import { startSimulator } from "@forkloop/sim";
import { createBuiltinTools } from "@forkloop/tools";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type AgentPool, createAgentPool } from "./agent-pool.js";
import { createAgentTool } from "./agent-tool.js";
import { createSession } from "./main-session.js";
import { createPoolCompactRunner } from "./pool-compact-runner.js";
import {
  forkPrefixDifferences,
  runParentTurn,
  runToEnd,
  type SessionRig,
  startSessionRig,
  testProfile,
  testSessionOptions,
  toolResultTexts,
} from "./testing/index.js";
import { loadTranscript } from "./transcript.js";

const brain: Brain = (request) => {
  const source = request.querySource ?? "";
  if (source.startsWith("agent:")) {
    const task = /Your task \(([^)]*)\)/.exec(request.lastUserText ?? "")?.[1] ?? "?";
    return { content: [{ type: "text", text: `report on ${task}` }] };
  }
  if (source.startsWith("skill:")) return { content: [{ type: "text", text: "skill says hello" }] };
  if (source === "compact" || source === "session_memory") {
    return { content: [{ type: "text", text: "<summary>## Goal\nexplain the repo</summary>" }] };
  }
  if (request.lastUserText?.startsWith("Just answer")) {
    return { content: [{ type: "text", text: `answer ${request.turnIndex}` }] };
  }
  if (request.lastToolResults.length > 0) {
    return { content: [{ type: "text", text: `parent done: ${request.lastToolResults.length} results` }] };
  }
  if (request.lastUserText?.includes("skill")) {
    return { content: [{ type: "tool_use", name: "Skill", input: { skill: "greet", args: "world" } }] };
  }
  return {
    content: [
      {
        type: "tool_use",
        name: "Agent",
        input: { description: "scan src", prompt: "Scan src/.", subagent_type: "fork" },
      },
      {
        type: "tool_use",
        name: "Agent",
        input: { description: "scan test", prompt: "Scan test/.", subagent_type: "fork" },
      },
    ],
  };
};

let sim: Simulator;
let pool: AgentPool;
let dir: string;

let rig: SessionRig<Simulator>;
beforeAll(async () => {
  rig = await startSessionRig(
    startSimulator({
      brain,
      latency: { default: { ttftMs: 100, prefillTokensPerSecond: 1e9, outputTokensPerSecond: 1e6 } },
    }),
    "session",
  );
  ({ sim, pool, dir } = rig);
  mkdirSync(join(dir, ".forkloop", "skills", "greet"), { recursive: true });
  writeFileSync(
    join(dir, ".forkloop", "skills", "greet", "SKILL.md"),
    "---\ndescription: Greets\n---\nSay hello.",
  );
});
afterAll(() => rig.close());
afterEach(() => sim.clearRequests());

function bySource(prefix: string): RequestRecord[] {
  return sim
    .requests()
    .filter((record) => record.path === "/v1/messages" && (record.querySource ?? "").startsWith(prefix));
}

describe("main session with sub-agents", () => {
  it("R-F1: two Agent calls in one turn run in parallel in the pool; the parent gets one tool_result each", async () => {
    const sessionsDir = join(dir, "sessions");
    const session = await createSession({
      ...testSessionOptions({ baseURL: sim.url, dir, pool }),
      sessionsDir,
    });
    const generator = session.run("Look at the repository.");
    let step = await generator.next();
    while (!step.done) step = await generator.next();
    const terminal = step.value;
    await session.close();

    expect(terminal.reason).toBe("completed");
    const results = toolResultTexts(terminal.messages);
    expect(results).toHaveLength(2);
    // The transcript keeps parallel calls' results in the order they ended (R-T2); the request
    // puts them back in call order.
    expect(results).toEqual(
      expect.arrayContaining([
        expect.stringContaining("report on scan src"),
        expect.stringContaining("report on scan test"),
      ]),
    );
    // The sub-agents' own turns never enter the parent's history (R-F1).
    expect(terminal.messages.filter((message) => message.type === "assistant")).toHaveLength(2);

    const forks = bySource("agent:");
    expect(forks).toHaveLength(2);
    const [a, b] = forks;
    expect(Math.max(a?.startedAt ?? 0, b?.startedAt ?? 0)).toBeLessThan(
      Math.min(a?.endedAt ?? 0, b?.endedAt ?? 0),
    );
    // Each fork starts from the parent's saved prefix: tools, system and messages read from cache.
    for (const fork of forks) expect(fork.usage?.cache_read_input_tokens).toBeGreaterThan(0);

    const loaded = await loadTranscript(session.transcriptPath);
    expect(loaded.terminal?.reason).toBe("completed");
    expect(loaded.cacheSafeParams?.model).toBe("claude-sonnet-5");
    // Parent links both ways: the session lists its sub-agents' transcripts, each names its parent.
    const links = loaded.records.filter((record) => record.type === "sub_agent");
    expect(links.map((link) => link.querySource)).toEqual(["agent:fork", "agent:fork"]);
    const agents = readdirSync(join(sessionsDir, session.sessionId, "agents"));
    expect(agents).toHaveLength(2);
    const child = await loadTranscript(join(sessionsDir, session.sessionId, "agents", agents[0] ?? ""));
    expect(child.start?.parent?.sessionId).toBe(session.sessionId);
    expect(child.terminal?.reason).toBe("completed");
  });

  it("R-V1: the transcripts time every request and tool call, and link every fork (Agent, session-memory) with the context lines", async () => {
    const sessionsDir = join(dir, "timed-sessions");
    const session = await createSession({
      ...testSessionOptions({ baseURL: sim.url, dir, pool }),
      sessionsDir,
      sessionMemory: true,
      sessionMemoryIntervalTokens: 1,
    });
    await runToEnd(session.run("Look at the repository."));
    await session.close();

    const loaded = await loadTranscript(session.transcriptPath);
    expect(loaded.start?.limits?.autoCompact).toBeLessThan(loaded.start?.limits?.blockingLimit ?? 0);
    const replies = loaded.records.flatMap((record) =>
      record.type === "message" && record.message.type === "assistant" ? [record.message] : [],
    );
    const requests = loaded.records.filter((record) => record.type === "request");
    expect(requests.map((request) => request.messageUuid)).toEqual(replies.map((message) => message.uuid));
    for (const request of requests) {
      expect(request.outcome).toBe("reply");
      expect(request.costUsd).toBeGreaterThan(0);
      // The simulator waits 100 ms before the first token.
      expect(Date.parse(request.firstTokenAt ?? "")).toBeGreaterThanOrEqual(
        Date.parse(request.startedAt) + 90,
      );
      expect(Date.parse(request.endedAt)).toBeGreaterThanOrEqual(Date.parse(request.firstTokenAt ?? ""));
    }
    const started = loaded.records.filter((record) => record.type === "tool_started");
    const toolUses = replies.flatMap((message) =>
      message.message.content.flatMap((block) => (block.type === "tool_use" ? [block.id] : [])),
    );
    expect(started.map((record) => record.toolUseId)).toEqual(toolUses);

    const links = loaded.records.filter((record) => record.type === "sub_agent");
    // Both Agent forks, and the session-memory fork (it may run after every turn at this interval).
    const sources = links.map((link) => link.querySource);
    expect(sources.filter((source) => source === "agent:fork")).toHaveLength(2);
    expect(sources).toContain("session_memory");
    for (const link of links) {
      // The session-memory fork runs in the background: wait for its end.
      let child = await loadTranscript(link.transcriptPath);
      for (let attempt = 0; attempt < 200 && !child.terminal; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        child = await loadTranscript(link.transcriptPath);
      }
      expect(child.start).toMatchObject({ agentId: link.agentId, parent: { sessionId: session.sessionId } });
      expect(child.start?.limits).toEqual(loaded.start?.limits);
      expect(child.records.some((record) => record.type === "request" && record.outcome === "reply")).toBe(
        true,
      );
    }
  });

  it("resumes a session from its transcript: the next turn continues the saved history", async () => {
    const sessionsDir = join(dir, "resume-sessions");
    const options = {
      endpoint: { apiKey: "test-key", baseURL: sim.url },
      cwd: dir,
      profile: testProfile(),
      sessionsDir,
      pool,
      home: dir,
      sessionMemory: false,
    };
    const first = await createSession(options);
    for await (const _event of first.run("Just answer: one.")) {
      // drain
    }
    await first.close();
    const resumed = await createSession({ ...options, resumeSessionId: first.sessionId });
    expect(resumed.history().map((message) => message.type)).toEqual(["user", "assistant"]);
    const generator = resumed.run("Just answer: two.");
    let step = await generator.next();
    while (!step.done) step = await generator.next();
    await resumed.close();
    expect(step.value.messages.filter((message) => message.type !== "system")).toHaveLength(4);
    const last = bySource("sdk").at(-1);
    expect(last?.rawBody).toContain("Just answer: one.");
    expect(last?.rawBody).toContain("answer 0");
    expect((await loadTranscript(resumed.transcriptPath)).messages).toHaveLength(4);
  });

  it("R-C5: the session-memory fork runs in the pool in the background and writes the notes file", async () => {
    const sessionsDir = join(dir, "memory-sessions");
    const session = await createSession({
      endpoint: { apiKey: "test-key", baseURL: sim.url },
      cwd: dir,
      profile: testProfile(),
      sessionsDir,
      pool,
      home: dir,
      sessionMemoryIntervalTokens: 1,
    });
    // Two API calls (Agent turn, then the answer): the pipeline starts the notes fork before the second.
    for await (const _event of session.run("Look at the repository.")) {
      // drain
    }
    const notesPath = join(sessionsDir, session.sessionId, "memory.md");
    for (let attempt = 0; attempt < 200 && !existsSync(notesPath); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await session.close();
    expect(readFileSync(notesPath, "utf8")).toContain("explain the repo");
    const [notes] = bySource("session_memory");
    // A fork of the session: the parent's prefix is read from the cache.
    expect(notes?.usage?.cache_read_input_tokens).toBeGreaterThan(0);
  });

  it("R-F1: the Skill tool runs a SKILL.md in a fork", async () => {
    const session = await createSession(testSessionOptions({ baseURL: sim.url, dir, pool }));
    const generator = session.run("Use the skill please.");
    let step = await generator.next();
    while (!step.done) step = await generator.next();
    await session.close();
    expect(toolResultTexts(step.value.messages)[0]).toContain("skill says hello");
    const [skill] = bySource("skill:greet");
    expect(skill?.rawBody).toContain("Say hello.");
  });

  it("R-C4/R-F3: the compact and session-memory forks send the parent's exact prefix (raw bodies compared) and read it from the cache", async () => {
    const client = new Anthropic({ apiKey: "test-key", baseURL: sim.url });
    // The parent has a parent-side tool (Agent) besides the built-ins, as a session does: the
    // compact fork must send the same tool list (not its own, not none) or the cache misses.
    const agentTool = createAgentTool(pool, [], {
      getCacheSafeParams: () => undefined,
      profile: testProfile(),
    }) as unknown as Tool;
    const { cacheSafeParams } = await runParentTurn({
      client,
      prompt: "Parent: what is here?",
      cwd: dir,
      tools: [...createBuiltinTools(), agentTool],
    });
    const [parent] = sim.requests().filter((record) => record.path === "/v1/messages");
    if (!parent) throw new Error("expected the parent's request");
    const runner = createPoolCompactRunner(pool, { cwd: dir });
    for (const querySource of ["compact", "session_memory"] as const) {
      const result = await runner({
        cacheSafeParams,
        instruction: "Summarize the conversation.",
        signal: new AbortController().signal,
        querySource,
      });
      expect(result.ok && result.summary).toContain("<summary>");
      const [record] = bySource(querySource);
      if (!record) throw new Error(`expected a ${querySource} request`);
      expect(forkPrefixDifferences(parent.rawBody, record.rawBody)).toEqual([]);
      expect(record.rawBody).toContain("Summarize the conversation.");
      const parentCached =
        (parent.usage?.cache_creation_input_tokens ?? 0) + (parent.usage?.cache_read_input_tokens ?? 0);
      // At least the parent's whole prefix (the second fork also reads what the first wrote).
      expect(record.usage?.cache_read_input_tokens).toBeGreaterThanOrEqual(parentCached);
    }
  });
});

describe("R-V2: the pool's first thread warms while the reply that forks is still streaming", () => {
  /** Threads the pool had when the reply's first block started, and when the run ended. */
  async function threadsSeen(prompt: string, warmPoolAtStart = false) {
    const cold = createAgentPool({
      endpoint: { apiKey: "test-key", baseURL: sim.url },
      maxThreads: 1,
      minThreads: 0,
    });
    try {
      const session = await createSession({
        ...testSessionOptions({ baseURL: sim.url, dir, pool: cold }),
        sessionsDir: join(dir, "sessions-prewarm"),
        ...(warmPoolAtStart ? { warmPoolAtStart } : {}),
      });
      const atStart = cold.stats().threads;
      let atFirstBlock: number | undefined;
      for await (const event of session.run(prompt)) {
        const blockStarted = event.type === "stream_event" && event.event.type === "content_block_start";
        if (blockStarted && atFirstBlock === undefined) atFirstBlock = cold.stats().threads;
      }
      await session.close();
      return { atStart, atFirstBlock, atEnd: cold.stats().threads };
    } finally {
      await cold.close();
    }
  }

  it("R-V2: a reply that starts an Agent call starts the thread at once, before its input has streamed and the fork runs", async () => {
    const seen = await threadsSeen("Look at the repository.");
    expect(seen.atStart).toBe(0);
    expect(seen.atFirstBlock).toBe(1);
    expect(bySource("agent:").length).toBeGreaterThan(0);
  });

  it("R-V2 control: a session that can fork but never does starts no thread (nor waits for one at close)", async () => {
    expect(await threadsSeen("Just answer, please.")).toEqual({ atStart: 0, atFirstBlock: 0, atEnd: 0 });
    expect(bySource("agent:")).toHaveLength(0);
  });

  it("R-V2: a one-shot session (warmPoolAtStart) starts the thread as it starts, before its first request", async () => {
    const seen = await threadsSeen("Just answer, please.", true);
    expect(seen.atStart).toBe(1);
    expect(bySource("agent:")).toHaveLength(0);
  });
});
