import { mkdtemp, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { projectState } from "@forkloop/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type BatchSpec, batchDir, createBatch, loadBatch } from "./batch-store.js";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "forkloop-batch-store-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function spec(id: string, outputDir: string): BatchSpec {
  return {
    id,
    createdAt: new Date(0).toISOString(),
    cwd: root,
    source: { kind: "items", path: join(root, "items.jsonl") },
    prompt: "Answer {{item}}",
    model: "claude-sonnet-4-6",
    maxTurns: 10,
    allowedTools: [],
    disallowedTools: [],
    permissionMode: "default",
    fallbackModels: [],
    outputDir,
  };
}

describe("R-R12: default output paths follow the batch's directory", () => {
  it("R-R12: a state directory moved between a kill and a resume: results.jsonl and the report go to the batch's new directory; an --output of the user's own keeps its path", async () => {
    const before = projectState({ cwd: root, env: {}, stateDir: join(root, "state-a") });
    const after = projectState({ cwd: root, env: {}, stateDir: join(root, "state-b") });
    await createBatch(before, spec("moved", batchDir(before, "moved")));
    const own = join(root, "my-results");
    await createBatch(before, spec("pinned", own));
    await rename(join(root, "state-a"), join(root, "state-b"));

    const moved = await loadBatch(after, "moved");
    expect(moved.dir).toBe(batchDir(after, "moved"));
    expect(moved.spec.outputDir).toBe(batchDir(after, "moved"));
    expect((await loadBatch(after, "pinned")).spec.outputDir).toBe(own);
  });
});
