import { mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { batchStateDir, runCliInProcess, type SimHandle, startSimInProcess } from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * R-X3, R-B6: a `--json-schema` with constraints structured outputs do not support (string
 * lengths, number bounds, `maxItems` — structured outputs page,
 * https://platform.claude.com/docs/en/build-with-claude/structured-outputs) reaches the API as the
 * official SDK's helpers send it: each such constraint moved into its property's description.
 * Sent as written, the simulator answers 400 as the API does. The answer is still the user's
 * schema's: the batch checks it against the schema as written.
 */
const SCHEMA = {
  type: "object",
  properties: {
    name: { type: "string", minLength: 3, description: "who" },
    score: { type: "integer", minimum: 2, maximum: 9 },
    tags: { type: "array", items: { type: "string" }, maxItems: 2 },
  },
  required: ["name", "score", "tags"],
};

let dir: string;
let sim: SimHandle;
beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "forkloop-json-schema-constraints-")));
  await writeFile(join(dir, "schema.json"), JSON.stringify(SCHEMA));
  await writeFile(join(dir, "items.jsonl"), '{"n":1}\n');
  sim = await startSimInProcess(dir);
}, 60_000);
afterAll(async () => {
  await sim?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** The output_config.format schemas of the requests since `from`, and the statuses they got. */
async function sent(from: number): Promise<{ schemas: unknown[]; statuses: number[] }> {
  const records = (await sim.requests()).slice(from);
  return {
    schemas: records
      .map((record) => JSON.parse(record.rawBody) as { output_config?: { format?: { schema?: unknown } } })
      .map((body) => body.output_config?.format?.schema)
      .filter((schema) => schema !== undefined),
    statuses: records.map((record) => record.status),
  };
}

const SENT_PROPERTIES = {
  name: { type: "string", description: "who\n\n{minLength: 3}" },
  score: { type: "integer", description: "{minimum: 2, maximum: 9}" },
  tags: { type: "array", items: { type: "string" }, description: "{maxItems: 2}" },
};

describe("R-X3, R-B6: --json-schema constraints structured outputs do not support", () => {
  it("R-X3: run --json-schema moves them into descriptions as the SDK's helpers do; the answer keeps them", async () => {
    const before = (await sim.requests()).length;
    const result = await runCliInProcess(
      ["-p", "Rate it.", "--json-schema", "schema.json", "--output-format", "json"],
      { cwd: dir, env: sim.env },
    );
    expect(result.code, result.stderr).toBe(0);
    const output = JSON.parse(result.stdout).structured_output as {
      name: string;
      score: number;
      tags: unknown[];
    };
    expect(output.name.length).toBeGreaterThanOrEqual(3);
    expect(output.score).toBeGreaterThanOrEqual(2);
    expect(output.score).toBeLessThanOrEqual(9);
    expect(output.tags.length).toBeLessThanOrEqual(2);
    const { schemas, statuses } = await sent(before);
    expect(statuses.every((status) => status === 200)).toBe(true);
    expect(schemas[0]).toEqual({
      type: "object",
      properties: SENT_PROPERTIES,
      additionalProperties: false,
      required: ["name", "score", "tags"],
    });
  });

  it("R-B6: a batch sends the same form and checks each answer against the schema as written", async () => {
    const before = (await sim.requests()).length;
    const result = await runCliInProcess(
      [
        "batch",
        "--items",
        "items.jsonl",
        "--prompt",
        "Rate item {{item.n}}.",
        "--json-schema",
        "schema.json",
        "--id",
        "c",
      ],
      { cwd: dir, env: sim.env },
    );
    expect(result.code, result.stderr).toBe(0);
    const { schemas, statuses } = await sent(before);
    expect(statuses.every((status) => status === 200)).toBe(true);
    expect(schemas.length).toBeGreaterThan(0);
    for (const schema of schemas) expect(schema).toMatchObject({ properties: SENT_PROPERTIES });
    const [row] = (await readFile(join(batchStateDir(dir, "c"), "results.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(row).toMatchObject({ status: "succeeded", structured_output: { name: expect.any(String) } });
  });

  it("R-X3: a schema the transform cannot take (a property without a type) is exit 2 naming the fix, before any request", async () => {
    const before = (await sim.requests()).length;
    const untyped = JSON.stringify({ type: "object", properties: { name: { description: "who" } } });
    const run = await runCliInProcess(["-p", "Rate it.", "--json-schema", untyped], {
      cwd: dir,
      env: sim.env,
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--json-schema: JSON schema must have a type defined");
    expect(run.stderr).toContain("whose properties each have a type");
    const batch = await runCliInProcess(
      [
        "batch",
        "--items",
        "items.jsonl",
        "--prompt",
        "Rate {{item.n}}.",
        "--json-schema",
        untyped,
        "--id",
        "u",
      ],
      { cwd: dir, env: sim.env },
    );
    expect(batch.code).toBe(2);
    expect(batch.stderr).toContain("--json-schema: JSON schema must have a type defined");
    expect((await sim.requests()).length).toBe(before);
  });
});
