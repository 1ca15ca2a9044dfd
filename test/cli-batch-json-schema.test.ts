import { mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { batchStateDir, runCli } from "@forkloop/cli/testing";
import { type Simulator, startSimulator } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * R-B6 through the built CLI and the worker pool: `forkloop batch --json-schema` sends the schema
 * as every item request's `output_config.format` (the Messages API's structured outputs), checks
 * each final answer against it, and stores the parsed object as `structured_output`; an answer
 * that is not JSON for the schema fails its item with the reason (the simulator here answers
 * item 1 in JSON, item 2 in JSON of the wrong shape, item 3 in prose — its off_schema fault, an
 * endpoint that does not honour the schema).
 */
const SCHEMA = {
  type: "object",
  properties: { summary: { type: "string" }, lines: { type: "integer" } },
  required: ["summary", "lines"],
  additionalProperties: false,
};

let dir: string;
let server: Simulator;
const formats: unknown[] = [];
beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "forkloop-batch-schema-")));
  await writeFile(join(dir, "items.jsonl"), '{"n":1}\n{"n":2}\n{"n":3}\n');
  await writeFile(join(dir, "schema.json"), JSON.stringify(SCHEMA));
  server = await startSimulator({
    brain: (request) => {
      formats.push(request.body.output_config?.format);
      const prompt = JSON.stringify(request.body.messages);
      const text = prompt.includes("(item 1)")
        ? '{"summary":"one","lines":1}'
        : prompt.includes("(item 2)")
          ? '{"summary":"two"}'
          : "Here is the summary: it is fine.";
      return { content: [{ type: "text", text }], fault: "off_schema" };
    },
  });
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

const env = () => ({ ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.url });

describe("R-B6: forkloop batch --json-schema", () => {
  it("R-B6: every request carries the schema as output_config.format; a matching answer is structured_output, the others fail with the reason", async () => {
    const result = await runCli(
      [
        "batch",
        "--items",
        "items.jsonl",
        "--prompt",
        "Summarize (item {{item.n}})",
        "--json-schema",
        "schema.json",
        "--id",
        "s",
      ],
      { cwd: dir, env: env() },
    );
    expect(result.code, result.stderr).toBe(6);
    expect(formats.length).toBeGreaterThanOrEqual(3);
    // SCHEMA is already in the form the SDK's helpers send (no unsupported constraints).
    for (const format of formats) expect(format).toEqual({ type: "json_schema", schema: SCHEMA });
    const rows = (await readFile(join(batchStateDir(dir, "s"), "results.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(rows[0]).toMatchObject({ status: "succeeded", structured_output: { summary: "one", lines: 1 } });
    expect(rows[1]).toMatchObject({
      status: "failed",
      structured_output: null,
      error: { code: "structured_output" },
    });
    expect(rows[1].error.message).toContain("does not match the schema");
    expect(rows[2]).toMatchObject({ status: "failed", error: { code: "structured_output" } });
    expect(rows[2].error.message).toContain("is not JSON");
    // The answer itself is kept for a look.
    expect(rows[2].text).toBe("Here is the summary: it is fine.");
  });

  it("bad input: a schema that is not JSON, not an object schema, or a missing file is exit 2 naming the fix; nothing runs", async () => {
    const before = formats.length;
    for (const [schema, says] of [
      ["{not json", "not valid JSON"],
      ['{"type":"string"}', 'give a JSON Schema whose type is "object"'],
      ["missing.json", "cannot read missing.json"],
      ['{"type":"object","properties":{"a":{"type":"nope"}}}', "not valid JSON Schema"],
    ] as const) {
      const result = await runCli(
        ["batch", "--items", "items.jsonl", "--prompt", "Summarize {{item.n}}", "--json-schema", schema],
        { cwd: dir, env: env() },
      );
      expect(result.code, schema).toBe(2);
      expect(result.stderr, schema).toContain(says);
      expect(result.stderr.trim().split("\n"), schema).toHaveLength(1);
    }
    expect(formats.length).toBe(before);
  });
});
