import { mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectQueue, parseQueueUrl } from "@forkloop/batch";
import {
  batchStateDir,
  type RedisServer,
  runCliInProcess,
  startCliInProcess,
  startRedisServer,
} from "@forkloop/cli/testing";
import { type Simulator, startSimulator } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * R-B6, R-B1: `forkloop batch --queue URL --json-schema` through the CLI, a real redis-server, a
 * `forkloop worker` in this process and the simulator over HTTP. The schema travels with the
 * enqueued batch: the worker sends it as every item request's `output_config.format`, checks each
 * final answer against it and returns the parsed object with the result; the producer stores it
 * as `structured_output` in results.jsonl. An answer that is not JSON for the schema fails its item
 * with the reason. A re-attach keeps the enqueued schema, and one given another is refused.
 */
const SCHEMA = {
  type: "object",
  properties: { summary: { type: "string" }, lines: { type: "integer" } },
  required: ["summary", "lines"],
  additionalProperties: false,
};

let dir: string;
let server: Simulator;
let redis: RedisServer;
const formats: unknown[] = [];
beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "forkloop-queue-schema-")));
  await writeFile(join(dir, "items.jsonl"), '{"n":1}\n{"n":2}\n');
  await writeFile(join(dir, "schema.json"), JSON.stringify(SCHEMA));
  redis = await startRedisServer();
  server = await startSimulator({
    brain: (request) => {
      formats.push(request.body.output_config?.format);
      const prompt = JSON.stringify(request.body.messages);
      // Item 2 answers JSON of the wrong shape: an endpoint that does not honour the schema.
      const text = prompt.includes("(item 1)") ? '{"summary":"one","lines":1}' : '{"summary":"two"}';
      return { content: [{ type: "text", text }], fault: "off_schema" };
    },
  });
});
afterAll(async () => {
  await server?.close();
  await redis?.stop();
  await rm(dir, { recursive: true, force: true });
});

const env = () => ({ ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.url });
const cli = (args: string[]) => runCliInProcess(args, { cwd: dir, env: env() });
const worker = () =>
  startCliInProcess(["worker", "--queue", redis.url, "--concurrency", "2", "--sandbox", "off"], {
    cwd: dir,
    env: env(),
  });
async function rows(id: string): Promise<Record<string, unknown>[]> {
  return (await readFile(join(batchStateDir(dir, id), "results.jsonl"), "utf8"))
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
const batchArgs = (id: string) => [
  "batch",
  "--items",
  "items.jsonl",
  "--prompt",
  "Summarize (item {{item.n}})",
  "--queue",
  redis.url,
  "--attempts",
  "1",
  "--id",
  id,
  "--json-schema",
  "schema.json",
];

describe("R-B6: forkloop batch --queue URL --json-schema", { timeout: 120_000 }, () => {
  it("R-B6, R-B1: the worker sends the enqueued schema and checks each answer; the producer stores structured_output; a wrong answer fails its item with the reason; a re-attach keeps the schema", async () => {
    const running = worker();
    try {
      const result = await cli(batchArgs("qs"));
      expect(result.code, `${result.stderr}\nworker:\n${running.stderr()}`).toBe(6);
      expect(running.stderr()).toContain("each answer checked against its --json-schema");
      expect(formats).toHaveLength(2);
      for (const format of formats) expect(format).toEqual({ type: "json_schema", schema: SCHEMA });
      const [one, two] = (await rows("qs")) as [Record<string, unknown>, Record<string, unknown>];
      expect(one).toMatchObject({ status: "succeeded", structured_output: { summary: "one", lines: 1 } });
      expect(two).toMatchObject({
        status: "failed",
        structured_output: null,
        error: { code: "structured_output" },
      });
      expect((two.error as { message: string }).message).toContain("does not match the schema");

      // A re-attach without the flag keeps the enqueued schema: the same rows, nothing sent.
      const again = await cli(["batch", "--resume", "qs", "--queue", redis.url]);
      expect(again.code, again.stderr).toBe(6);
      expect((await rows("qs"))[0]).toMatchObject({ structured_output: { summary: "one", lines: 1 } });
      expect(formats).toHaveLength(2);
      // One given a schema is refused naming the fix, before Redis is asked anything.
      const other = await cli(["batch", "--resume", "qs", "--queue", redis.url, "--json-schema", "{}"]);
      expect(other.code).toBe(2);
      expect(other.stderr).toContain(
        "--resume continues batch qs with the settings it started with; drop --json-schema.",
      );
    } finally {
      await running.stop();
    }
  });

  it("R-B6, R-B1 (trust): a schema in Redis that cannot be used refuses the batch on the worker, each item failed with the reason; nothing is sent", async () => {
    const sent = formats.length;
    const admin = await connectQueue(parseQueueUrl(redis.url));
    // Enqueued with no worker running; its stored schema is then replaced by one that does not compile.
    const producer = startCliInProcess(batchArgs("qbad"), { cwd: dir, env: env() });
    try {
      await producer.waitFor(producer.stderr, (text) => text.includes("run them with `forkloop worker"));
      const key = "forkloop:batch:qbad:settings";
      const settings = JSON.parse((await admin.get(key)) ?? "{}");
      settings.spec.outputSchema = { type: "object", properties: { a: { type: "nonsense" } } };
      await admin.set(key, JSON.stringify(settings));
      const running = worker();
      try {
        const result = await producer.exited;
        expect(result.code, `${result.stderr}\nworker:\n${running.stderr()}`).toBe(7);
      } finally {
        await running.stop();
      }
      for (const row of await rows("qbad")) {
        expect(row).toMatchObject({ status: "failed", error: { code: "batch_refused" } });
        expect((row.error as { message: string }).message).toContain("its --json-schema cannot be used");
      }
      expect(formats).toHaveLength(sent);
    } finally {
      await producer.stop();
      admin.disconnect();
    }
  });
});
