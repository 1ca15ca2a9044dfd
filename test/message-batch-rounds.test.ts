import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import {
  type BatchJournalRecord,
  MESSAGE_BATCHES_LOG,
  type MessageBatchesClient,
  type MessageBatchJournal,
  MessageBatchRounds,
  openMessageBatchJournal,
  type RoundEvent,
} from "@forkloop/batch";
import { startSimulator } from "@forkloop/sim";
import { afterEach, describe, expect, it, vi } from "vitest";

/**
 * R-B8: the Message Batches rounds on their own — the pool's model transport fed request bodies
 * as a worker hands them over, against the simulator through the official SDK over HTTP.
 * Batch processing page: https://platform.claude.com/docs/en/build-with-claude/batch-processing
 */
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

const MODEL = "claude-haiku-4-5";
const body = (i: number, padding = 0) =>
  JSON.stringify({
    model: MODEL,
    max_tokens: 100,
    stream: true,
    system: [{ type: "text", text: "You answer briefly.", cache_control: { type: "ephemeral" } }],
    messages: [{ role: "user", content: `question ${i} ${"x".repeat(padding)}` }],
  });

async function setup(batches: { maxBytes?: number; processingMs?: number } = {}) {
  const sim = await startSimulator({
    batches: { processingMs: 0, ...batches },
    brain: (req) => ({
      content: [
        { type: "text", text: `answer to ${(req.lastUserText ?? "").split(" ").slice(0, 2).join(" ")}` },
      ],
    }),
  });
  cleanup.push(() => sim.close());
  const dir = await mkdtemp(join(tmpdir(), "forkloop-rounds-"));
  cleanup.push(() => rm(dir, { recursive: true, force: true }));
  return { sim, dir, ...(await roundsIn(dir, sim.url, 50)) };
}

/** Rounds over the journal in `dir` (a new run of the batch), against the simulator at `simUrl`. */
async function roundsIn(dir: string, simUrl: string, roundWaitMs: number, progressEveryMs?: number) {
  const journal = await openMessageBatchJournal(join(dir, MESSAGE_BATCHES_LOG));
  cleanup.push(() => journal.close());
  const client = new Anthropic({ apiKey: "k", baseURL: simUrl, maxRetries: 0 });
  const events: RoundEvent[] = [];
  const rounds = new MessageBatchRounds({
    client: client.messages.batches as unknown as MessageBatchesClient,
    journal,
    pollMs: 5,
    roundWaitMs,
    ...(progressEveryMs === undefined ? {} : { progressEveryMs }),
    onEvent: (event) => events.push(event),
  });
  cleanup.push(async () => rounds.close());
  return { rounds, events, journal, client };
}

describe("R-B8: Message Batches rounds", () => {
  it("R-B8, R-B9: requests waiting together go as one batch; each answer is the event stream the SDK reads, at batch prices", async () => {
    const { sim, rounds, events, journal } = await setup();
    const signal = new AbortController().signal;
    const answers = await Promise.all(
      [1, 2, 3].map((i) => rounds.transport({ agentId: `item-q${i}-1`, body: body(i), headers: {} }, signal)),
    );
    expect(events.filter((e) => e.type === "round_sent")).toHaveLength(1);
    expect(journal.sent).toHaveLength(1);
    expect(journal.sent[0]!.entries.map((e) => e.item)).toEqual(["q1", "q2", "q3"]);
    for (const [i, answer] of answers.entries()) {
      expect(answer.status).toBe(200);
      expect(answer.headers["content-type"]).toBe("text/event-stream");
      // The SDK's own stream reader takes it: the message an online request would get.
      const reader = new Anthropic({
        apiKey: "k",
        fetch: async () => new Response(answer.body, { status: 200, headers: answer.headers }),
      });
      const message = await reader.messages
        .stream({ model: MODEL, max_tokens: 100, messages: [{ role: "user", content: "x" }] })
        .finalMessage();
      expect(message.content).toMatchObject([{ type: "text", text: `answer to question ${i + 1}` }]);
      expect(message.usage.service_tier).toBe("batch");
      const events = answer.body
        .trim()
        .split("\n\n")
        .map((chunk) => JSON.parse(chunk.split("\n")[1]!.slice("data: ".length)));
      expect(events[0].type).toBe("message_start");
      expect(events[0].message.usage.service_tier).toBe("batch");
      expect(events.find((e) => e.type === "content_block_delta").delta.text).toBe(
        `answer to question ${i + 1}`,
      );
      expect(events.at(-1).type).toBe("message_stop");
    }
    const entries = sim.requests().filter((r) => r.path.includes("#"));
    expect(entries).toHaveLength(3);
    // The shared prefix's breakpoint is written for an hour, and billed as a 1-hour write.
    for (const entry of entries) {
      expect(JSON.parse(entry.rawBody).system[0].cache_control).toEqual({ type: "ephemeral", ttl: "1h" });
    }
    expect(rounds.savingOf("q1")!.onlineCostUsd).toBeCloseTo(rounds.savingOf("q1")!.batchCostUsd * 2, 12);
  });

  it("R-B8: a round the API refuses as too large is split, never refused whole", async () => {
    const { sim, rounds, events } = await setup({ maxBytes: 6_000 });
    const signal = new AbortController().signal;
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        rounds.transport({ agentId: `item-big${i}-1`, body: body(i, 1_000), headers: {} }, signal),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    expect(events.filter((e) => e.type === "round_split").length).toBeGreaterThan(0);
    const entries = sim.requests().filter((r) => r.path.includes("#"));
    expect(entries).toHaveLength(8);
    expect(new Set(entries.map((e) => e.path.split("#")[0])).size).toBeGreaterThan(1);
  });

  it("R-B10: a request sent by an earlier run is answered from its journaled batch, not sent again", async () => {
    const { sim, rounds, dir, journal } = await setup({ processingMs: 50 });
    const signal = new AbortController().signal;
    const first = await rounds.transport({ agentId: "item-r1-1", body: body(1), headers: {} }, signal);
    rounds.close();
    await journal.close();
    const again = await openMessageBatchJournal(join(dir, MESSAGE_BATCHES_LOG));
    cleanup.push(() => again.close());
    const client = new Anthropic({ apiKey: "k", baseURL: sim.url, maxRetries: 0 });
    const events: RoundEvent[] = [];
    const resumed = new MessageBatchRounds({
      client: client.messages.batches as unknown as MessageBatchesClient,
      journal: again,
      pollMs: 5,
      onEvent: (event) => events.push(event),
    });
    // The same item, a later attempt, the same request: its answer is the journaled entry's.
    const second = await resumed.transport({ agentId: "item-r1-2", body: body(1), headers: {} }, signal);
    resumed.close();
    expect(second.body).toBe(first.body);
    expect(events.map((e) => e.type)).toEqual(["round_resumed", "round_ended"]);
    expect(sim.requests().filter((r) => r.path.includes("#"))).toHaveLength(1);
  });

  /** A run killed at `at`: the journal's record of that kind, or the create, never returns. */
  function killedAt(
    at: "sent" | "create",
    journal: MessageBatchJournal,
    client: MessageBatchesClient,
  ): { journal: MessageBatchJournal; client: MessageBatchesClient } {
    const never = new Promise<never>(() => {});
    return {
      journal: {
        ...journal,
        unconfirmed: () => journal.unconfirmed(),
        record: (record: BatchJournalRecord) => (record.kind === at ? never : journal.record(record)),
      },
      client: { ...client, create: (...args) => (at === "create" ? never : client.create(...args)) },
    };
  }

  async function killedRun(at: "sent" | "create") {
    const { sim, dir, journal } = await setup({ processingMs: 50 });
    const sdk = new Anthropic({ apiKey: "k", baseURL: sim.url, maxRetries: 0 });
    const killed = killedAt(at, journal, sdk.messages.batches as unknown as MessageBatchesClient);
    const run = new MessageBatchRounds({ ...killed, pollMs: 5, roundWaitMs: 10 });
    void run.transport({ agentId: "item-k1-1", body: body(1), headers: {} }, new AbortController().signal);
    await vi.waitFor(() => expect(journal.unconfirmed()).toHaveLength(1));
    if (at === "sent") {
      await vi.waitFor(async () => expect((await sdk.messages.batches.list()).data).toHaveLength(1));
    }
    run.close();
    await journal.close();
    return { sim, dir };
  }

  it("R-B10: a run killed between creating a round's batch and journaling its id: the resume finds that batch at the endpoint and polls it; nothing is sent twice", async () => {
    const { sim, dir } = await killedRun("sent");
    const { rounds, events } = await roundsIn(dir, sim.url, 10);
    const answer = await rounds.transport(
      { agentId: "item-k1-2", body: body(1), headers: {} },
      new AbortController().signal,
    );
    expect(answer.status, answer.body).toBe(200);
    expect(events[0]).toMatchObject({ type: "round_unconfirmed", entries: 1, batchId: expect.any(String) });
    expect(events.some((e) => e.type === "round_sent")).toBe(false);
    expect(sim.requests().filter((r) => r.path.includes("#"))).toHaveLength(1);
  });

  it("R-B10: a run killed before its round's create reached the endpoint: the resume finds no batch of it and sends the round once", async () => {
    const { sim, dir } = await killedRun("create");
    const { rounds, events } = await roundsIn(dir, sim.url, 10);
    const answer = await rounds.transport(
      { agentId: "item-k1-2", body: body(1), headers: {} },
      new AbortController().signal,
    );
    expect(answer.status, answer.body).toBe(200);
    expect(events.map((e) => e.type)).toEqual(["round_unconfirmed", "round_sent", "round_ended"]);
    expect(events[0]).toMatchObject({ batchId: undefined });
    expect(sim.requests().filter((r) => r.path.includes("#"))).toHaveLength(1);
  });

  it("R-B10: a batch of someone else's taken for a killed round answers none of its entries (their custom ids are the run's own), so they are sent again", async () => {
    const { sim, dir } = await killedRun("create");
    const { rounds, events, client } = await roundsIn(dir, sim.url, 10);
    const foreign = await client.messages.batches.create({
      requests: [
        {
          custom_id: "someone-else",
          params: { model: MODEL, max_tokens: 10, messages: [{ role: "user", content: "hi" }] },
        },
      ],
    });
    const signal = new AbortController().signal;
    const first = await rounds.transport({ agentId: "item-k1-2", body: body(1), headers: {} }, signal);
    expect(events[0]).toMatchObject({ type: "round_unconfirmed", batchId: foreign.id });
    expect(first.status).toBe(500);
    expect(first.body).toMatch(/has no result/);
    const retried = await rounds.transport({ agentId: "item-k1-2", body: body(1), headers: {} }, signal);
    expect(retried.status, retried.body).toBe(200);
    expect(events.filter((e) => e.type === "round_sent")).toHaveLength(1);
  });

  it("R-B8: a processing batch is reported now and then — how long it has processed, its expiry, and from the second round on an ETA from the earlier rounds (the API's counts do not move until a batch ends)", async () => {
    const sim = await startSimulator({ batches: { processingMs: 700 } });
    cleanup.push(() => sim.close());
    const dir = await mkdtemp(join(tmpdir(), "forkloop-rounds-"));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const { rounds, events } = await roundsIn(dir, sim.url, 10, 200);
    const signal = new AbortController().signal;
    for (const i of [1, 2]) {
      const answer = await rounds.transport({ agentId: `item-w${i}-1`, body: body(i), headers: {} }, signal);
      expect(answer.status).toBe(200);
    }
    const waiting = events.filter((e) => e.type === "round_waiting");
    const [first, second] = [...new Set(waiting.map((e) => e.batchId))];
    const ofBatch = (id: string | undefined) => waiting.filter((e) => e.batchId === id);
    expect(ofBatch(first).length).toBeGreaterThan(0);
    for (const event of ofBatch(first)) {
      expect(event).toMatchObject({ entries: 1, etaMs: undefined, expiresAt: expect.any(String) });
      expect(event.elapsedMs).toBeGreaterThanOrEqual(200);
    }
    // The first round took about 700 ms: the second's ETA is what is left of that.
    const eta = ofBatch(second)[0];
    expect(eta?.etaMs).toBeGreaterThanOrEqual(0);
    expect(eta?.etaMs).toBeLessThan(2_000);
  });
});
