import Anthropic from "@anthropic-ai/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { costUsd } from "./handle-messages.js";
import { resolveModel } from "./model-registry.js";
import { startSimulator } from "./server.js";
import type { Simulator } from "./types.js";

// The Message Batches API through the official SDK (R-D4):
// https://platform.claude.com/docs/en/build-with-claude/batch-processing
let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const MODEL = "claude-haiku-4-5";
const request = (i: number) => ({
  custom_id: `item-${i}`,
  params: { model: MODEL, max_tokens: 50, messages: [{ role: "user" as const, content: `question ${i}` }] },
});

function clockAt(start: number) {
  const clock = { now: start, tick: (ms: number) => (clock.now += ms) };
  return clock;
}

describe("R-D4: the Message Batches API through the official SDK", () => {
  it("R-D4: 100 requests: create, poll until ended, results as JSONL at half price; cancel another batch; delete", async () => {
    const clock = clockAt(1_000_000);
    sim = await startSimulator({
      clock: () => clock.now,
      batches: { processingMs: 60_000 },
      brain: (req) => ({ content: [{ type: "text", text: `answer to ${req.lastUserText}` }] }),
    });
    const client = new Anthropic({ apiKey: "k", baseURL: sim.url, maxRetries: 0 });
    const batch = await client.messages.batches.create({
      requests: Array.from({ length: 100 }, (_, i) => request(i)),
    });
    expect(batch).toMatchObject({
      type: "message_batch",
      processing_status: "in_progress",
      request_counts: { processing: 100, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
      results_url: null,
      ended_at: null,
    });
    expect(Date.parse(batch.expires_at) - Date.parse(batch.created_at)).toBe(24 * 60 * 60 * 1000);
    // Simulated time: still processing until the clock passes processingMs.
    clock.tick(30_000);
    expect((await client.messages.batches.retrieve(batch.id)).processing_status).toBe("in_progress");
    await expect(client.messages.batches.results(batch.id)).rejects.toThrow(/results_url/);
    clock.tick(30_000);
    const ended = await client.messages.batches.retrieve(batch.id);
    expect(ended).toMatchObject({
      processing_status: "ended",
      request_counts: { processing: 0, succeeded: 100 },
    });
    const results: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
    for await (const line of await client.messages.batches.results(batch.id)) results.push(line);
    expect(results).toHaveLength(100);
    const first = results.find((r) => r.custom_id === "item-7");
    expect(first?.result.type).toBe("succeeded");
    if (first?.result.type !== "succeeded") throw new Error("unreachable");
    expect(first.result.message.content[0]).toMatchObject({ type: "text", text: "answer to question 7" });
    expect(first.result.message.usage.service_tier).toBe("batch");
    // Batch prices: half the standard price of the same usage (pricing page).
    const records = sim.requests().filter((r) => r.path.startsWith(`/v1/messages/batches/${batch.id}#`));
    expect(records).toHaveLength(100);
    for (const record of records) {
      expect(record.costUsd).toBeCloseTo(costUsd(resolveModel(MODEL)!, record.usage!) / 2, 15);
    }

    const other = await client.messages.batches.create({ requests: [request(1), request(2)] });
    const canceling = await client.messages.batches.cancel(other.id);
    expect(canceling.processing_status).toBe("canceling");
    expect(canceling.cancel_initiated_at).not.toBeNull();
    const canceled = await client.messages.batches.retrieve(other.id);
    expect(canceled).toMatchObject({ processing_status: "ended", request_counts: { canceled: 2 } });
    const canceledLines = [];
    for await (const line of await client.messages.batches.results(other.id))
      canceledLines.push(line.result.type);
    expect(canceledLines).toEqual(["canceled", "canceled"]);

    const listed = [];
    for await (const item of client.messages.batches.list({ limit: 1 })) listed.push(item.id);
    expect(listed).toEqual([other.id, batch.id]);
    expect(await client.messages.batches.delete(batch.id)).toEqual({
      id: batch.id,
      type: "message_batch_deleted",
    });
    await expect(client.messages.batches.retrieve(batch.id)).rejects.toBeInstanceOf(Anthropic.NotFoundError);
  });

  it("R-D4: per-request errors inside a batch; an in-progress batch cannot be deleted; unfinished requests expire", async () => {
    const clock = clockAt(5_000);
    sim = await startSimulator({ clock: () => clock.now, batches: { processingMs: 1000 } });
    const client = new Anthropic({ apiKey: "k", baseURL: sim.url, maxRetries: 0 });
    const batch = await client.messages.batches.create({
      requests: [
        request(1),
        { custom_id: "retired", params: { ...request(2).params, model: "claude-opus-4-1-20250805" } },
        { custom_id: "too-long", params: { ...request(3).params, max_tokens: 64_001 } },
      ],
    });
    await expect(client.messages.batches.delete(batch.id)).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    clock.tick(1000);
    const byId = new Map<string, Anthropic.Messages.MessageBatchResult>();
    for await (const line of await client.messages.batches.results(batch.id))
      byId.set(line.custom_id, line.result);
    expect(byId.get("item-1")?.type).toBe("succeeded");
    expect(byId.get("retired")).toEqual({
      type: "errored",
      error: {
        type: "error",
        error: { type: "not_found_error", message: "model: claude-opus-4-1-20250805" },
      },
    });
    expect(byId.get("too-long")).toMatchObject({
      type: "errored",
      error: { error: { type: "invalid_request_error" } },
    });

    await sim.close();
    sim = await startSimulator({ clock: () => clock.now, batches: { processingMs: 48 * 3600_000 } });
    const slow = new Anthropic({ apiKey: "k", baseURL: sim.url, maxRetries: 0 });
    const late = await slow.messages.batches.create({ requests: [request(1)] });
    clock.tick(24 * 3600_000);
    expect(await slow.messages.batches.retrieve(late.id)).toMatchObject({
      processing_status: "ended",
      request_counts: { expired: 1 },
    });
  });

  it("R-D4: a malformed batch is refused as the API refuses it (no requests, bad custom_id, duplicates)", async () => {
    sim = await startSimulator();
    const client = new Anthropic({ apiKey: "k", baseURL: sim.url, maxRetries: 0 });
    for (const requests of [[], [{ custom_id: "bad id!", params: {} }], [request(1), request(1)]]) {
      await expect(client.messages.batches.create({ requests } as never)).rejects.toBeInstanceOf(
        Anthropic.BadRequestError,
      );
    }
    // The API's words for an over-long id (anthropics/anthropic-sdk-python#1220).
    const tooLong = await client.messages.batches
      .create({ requests: [{ ...request(1), custom_id: "x".repeat(65) }] } as never)
      .catch((error: unknown) => error);
    expect((tooLong as InstanceType<typeof Anthropic.BadRequestError>).message).toContain(
      "requests.0.custom_id: String should have at most 64 characters",
    );
    await expect(client.messages.batches.retrieve("msgbatch_nope")).rejects.toBeInstanceOf(
      Anthropic.NotFoundError,
    );
  });

  it("R-D4, R-B8: a scripted batch expires or is canceled part way and fails chosen entries", async () => {
    const clock = clockAt(10_000);
    sim = await startSimulator({
      clock: () => clock.now,
      batches: { processingMs: 500, script: "expire@1:after=1,cancel@2:after=2,529@3.2,500@3.3" },
    });
    const client = new Anthropic({ apiKey: "k", baseURL: sim.url, maxRetries: 0 });
    const three = () => [request(1), request(2), request(3)];
    const created = [];
    for (let i = 0; i < 3; i++) created.push(await client.messages.batches.create({ requests: three() }));
    clock.tick(500);
    const types = async (id: string) => {
      const out: string[] = [];
      for await (const line of await client.messages.batches.results(id)) out.push(line.result.type);
      return out;
    };
    expect(await types(created[0]!.id)).toEqual(["succeeded", "expired", "expired"]);
    const canceled = await client.messages.batches.retrieve(created[1]!.id);
    expect(canceled).toMatchObject({
      processing_status: "ended",
      request_counts: { succeeded: 2, canceled: 1 },
    });
    expect(canceled.cancel_initiated_at).not.toBeNull();
    expect(await types(created[1]!.id)).toEqual(["succeeded", "succeeded", "canceled"]);
    const errored = new Map<string, unknown>();
    for await (const line of await client.messages.batches.results(created[2]!.id))
      errored.set(line.custom_id, line.result);
    expect(errored.get("item-2")).toMatchObject({
      type: "errored",
      error: { type: "error", error: { type: "overloaded_error" } },
    });
    expect(errored.get("item-3")).toMatchObject({ type: "errored", error: { error: { type: "api_error" } } });
    expect(errored.get("item-1")).toMatchObject({ type: "succeeded" });
    // Only entries that ran are billed: the expired and canceled ones have no usage.
    const billed = sim.requests().filter((r) => r.path.includes("#") && r.usage !== null);
    expect(billed).toHaveLength(1 + 2 + 1);
  });

  it("R-D4: a batch over the size limit is a 413 (the API's limit is 256 MB; a simulator may set less)", async () => {
    sim = await startSimulator({ batches: { maxBytes: 2_000 } });
    const client = new Anthropic({ apiKey: "k", baseURL: sim.url, maxRetries: 0 });
    const many = Array.from({ length: 40 }, (_, i) => request(i));
    await expect(client.messages.batches.create({ requests: many })).rejects.toMatchObject({ status: 413 });
    expect((await client.messages.batches.create({ requests: many.slice(0, 2) })).processing_status).toBe(
      "in_progress",
    );
  });
});
