import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type ProjectState, projectState } from "@forkloop/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createBatch } from "./batch-store.js";
import {
  type BatchCompositionFlags,
  type BatchFlagReader,
  batchModeRefusal,
  composeBatch,
  queueReattachRefusal,
  resumableBatch,
} from "./compose-batch.js";
import type { StartSettings } from "./resume-settings.js";

let root: string;
let state: ProjectState;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "forkloop-compose-batch-"));
  state = projectState({ cwd: root, env: {}, stateDir: join(root, "state") });
  await writeFile(join(root, "a.txt"), "alpha\n");
  await writeFile(join(root, "b.txt"), "beta\n");
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** The command's flag reader, reduced to what these cases give: values pass through as flags. */
const reader: BatchFlagReader<BatchCompositionFlags> = {
  check: (values) => ({
    ...(typeof values["max-turns"] === "string" ? { "max-turns": Number(values["max-turns"]) } : {}),
    ...(typeof values.model === "string" ? { model: values.model } : {}),
  }),
  jsonSchema: (value) => JSON.parse(value) as Record<string, unknown>,
  mcpConfig: (value, cwd) => resolve(cwd, value),
  loopFlags: ["thinking"],
};

function compose(flags: BatchCompositionFlags, given: StartSettings = {}) {
  return composeBatch({ flags, cwd: root, state, loop: {}, given, reader });
}

describe("composing a batch from its flags (R-A4: batch composition is the library's)", () => {
  it("R-R7: options that make no batch are an invalid_batch answer naming the fix, not a throw", async () => {
    const cases: [BatchCompositionFlags, string][] = [
      [{ "retry-failed": true, files: "*.txt", prompt: "p" }, "--retry-failed only applies to --resume ID"],
      [{ "retry-conflicts": true }, "--retry-conflicts only applies to --resume ID"],
      [{ repair: true }, "--repair only applies to --resume ID"],
      [{ prompt: "p" }, "give exactly one of --files GLOB or --items FILE.jsonl"],
      [{ files: "*.txt", items: "i.jsonl", prompt: "p" }, "give exactly one of --files GLOB"],
      [{ files: "*.txt" }, '--prompt is required, e.g. --prompt "Summarize {{file}}"'],
      [{ items: "i.jsonl" }, '--prompt is required, e.g. --prompt "Summarize {{item}}"'],
    ];
    for (const [flags, message] of cases) {
      const answer = await compose(flags);
      expect(answer.ok, message).toBe(false);
      if (answer.ok) continue;
      expect(answer.error.code).toBe("invalid_batch");
      expect(answer.error.message).toContain(message);
    }
    const both = await compose({ prompt: "p" });
    // The command puts its usage after this one message.
    expect(!both.ok && both.error.data).toEqual({ usage: true });
  });

  it("R-A4: a new batch lists its items and lays the given flags over the defaults; start settings are kept as given", async () => {
    const answer = await compose(
      { files: "*.txt", prompt: "Summarize {{file}}", model: "haiku", output: "out", "max-turns": 3 },
      {
        files: "*.txt",
        prompt: "Summarize {{file}}",
        model: "haiku",
        output: "out",
        "max-turns": "3",
        cwd: ".",
      },
    );
    if (!answer.ok) throw answer.error;
    const plan = answer.value;
    expect(plan.kind).toBe("new");
    if (plan.kind !== "new") return;
    expect(plan.loaded.items.map((item) => item.label).sort()).toEqual(["a.txt", "b.txt"]);
    expect(plan.spec.model).toMatch(/^claude-haiku/);
    expect(plan.spec.maxTurns).toBe(3);
    expect(plan.spec.outputDir).toBe(join(root, "out"));
    // Neither the items nor where to find the batch are start settings.
    expect(plan.spec.startFlags).toEqual({ model: "haiku", output: "out", "max-turns": "3" });
  });

  it("R-B6: a --json-schema that a request cannot carry is refused before anything runs", async () => {
    const answer = await compose({ files: "*.txt", prompt: "p", "json-schema": '{"type":"string"}' });
    expect(answer.ok).toBe(false);
    if (answer.ok) return;
    expect(answer.error.code).toBe("invalid_batch");
    expect(answer.error.message).toMatch(/^--json-schema: .*give a JSON Schema whose type is "object"/);
  });

  it("R-R7: a resume keeps the stored batch, lays the given settings over it, and refuses what would change its items", async () => {
    const created = await compose(
      { files: "*.txt", prompt: "Summarize {{file}}", "max-turns": 4 },
      { files: "*.txt", prompt: "Summarize {{file}}", "max-turns": "4" },
    );
    if (!created.ok || created.value.kind !== "new") throw new Error("not a new batch");
    await createBatch(state, created.value.spec);
    const id = created.value.spec.id;

    const identity = await resumableBatch({
      state,
      flags: { resume: id, prompt: "other" },
      given: {},
      reader,
    });
    expect(!identity.ok && identity.error.message).toContain(
      "drop --prompt (start a new batch for other items)",
    );
    const dryRun = await resumableBatch({ state, flags: { resume: id, "dry-run": true }, given: {}, reader });
    expect(!dryRun.ok && dryRun.error.message).toContain(`\`forkloop batch status ${id}\``);

    const given = { "max-turns": "6" };
    const resumable = await resumableBatch({ state, flags: { resume: id, "max-turns": 6 }, given, reader });
    if (!resumable.ok) throw resumable.error;
    expect(resumable.value.flags).toEqual({ "max-turns": 6 });
    const resumed = await composeBatch({
      flags: { ...resumable.value.flags, resume: id },
      cwd: root,
      state,
      loop: {},
      given,
      stored: resumable.value.stored,
      reader,
    });
    if (!resumed.ok) throw resumed.error;
    expect(resumed.value).toMatchObject({
      kind: "resume",
      spec: { id, maxTurns: 6, startFlags: { "max-turns": "6" } },
      changes: ["--max-turns 6 (was 4)"],
    });
  });

  it("R-B1: a queued batch's re-attach refuses setting flags and a dry run, and takes the rest", () => {
    expect(queueReattachRefusal("b-q", { model: "opus", "max-turns": 3 })?.message).toBe(
      "--resume continues batch b-q with the settings it started with; drop --model, --max-turns.",
    );
    expect(queueReattachRefusal("b-q", { "dry-run": true })?.code).toBe("invalid_batch");
    // R-B6, R-B7: the schema and the reduce are enqueued with the batch: kept, never replaced.
    expect(queueReattachRefusal("b-q", { "json-schema": "{}", reduce: "sum up" })?.message).toBe(
      "--resume continues batch b-q with the settings it started with; drop --json-schema, --reduce.",
    );
    expect(queueReattachRefusal("b-q", {})).toBeUndefined();
  });
});

describe("R-B1: what only a local or only a queued batch can do", () => {
  it("R-B1: each local-only flag with --queue, and each queue-only flag without it, is refused naming the way that works", () => {
    const queue = "redis://127.0.0.1:6379";
    const cases: [BatchCompositionFlags, string][] = [
      [{ attempts: 3 }, "--attempts and --retry-delay apply to --queue batches"],
      [{ "retry-delay": 10 }, "--attempts and --retry-delay apply to --queue batches"],
      [{ queue, api: "batches" }, "--api batches needs a local batch"],
      [{ queue, "max-budget-usd": 1 }, "--max-budget-usd needs a local batch"],
      [{ queue, report: true }, "--report needs a local batch"],
      [{ queue, isolate: true, "no-isolate": true }, "give one of --isolate and --no-isolate"],
      [
        { queue, resume: "b-1", "no-isolate": true },
        "--resume b-1 keeps the isolation the batch started with; drop --no-isolate.",
      ],
    ];
    for (const [flags, message] of cases) {
      const refusal = batchModeRefusal(flags);
      expect(refusal?.code, message).toBe("invalid_batch");
      expect(refusal?.message).toContain(message);
    }
    // Controls: what each mode can do goes through.
    expect(batchModeRefusal({ queue, attempts: 3, "retry-delay": 10, isolate: true })).toBeUndefined();
    // R-B6, R-B7: structured output and the reduce work on the queue too.
    expect(batchModeRefusal({ queue, "json-schema": "{}", reduce: "sum up" })).toBeUndefined();
    expect(
      batchModeRefusal({ api: "batches", "max-budget-usd": 1, report: true, reduce: "r" }),
    ).toBeUndefined();
  });
});
