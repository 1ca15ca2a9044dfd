import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { projectState, type RunEnvironment, resolveRunEnvironment } from "@forkloop/sdk";
import { SETTING_SOURCES } from "@forkloop/tools";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { BatchFlagReader } from "./compose-batch.js";
import { type BatchHostFlags, prepareLocalBatch, prepareQueuedBatch } from "./prepare-batch.js";

let root: string;
let environment: RunEnvironment;
const notices: string[] = [];
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "forkloop-prepare-batch-"));
  await writeFile(join(root, "a.txt"), "alpha\n");
  await writeFile(join(root, "b.bin"), Buffer.from([0, 1, 2, 0, 255]));
  notices.length = 0;
  environment = await resolveRunEnvironment({
    cwd: root,
    env: { HOME: root, PATH: process.env.PATH },
    settingSources: SETTING_SOURCES,
    trustProject: false,
    warn: (line) => notices.push(line),
  });
});
afterEach(async () => {
  await environment.close();
  await rm(root, { recursive: true, force: true });
});

const reader: BatchFlagReader<BatchHostFlags> = {
  check: () => ({}),
  jsonSchema: (value) => JSON.parse(value) as Record<string, unknown>,
  mcpConfig: (value, cwd) => resolve(cwd, value),
  loopFlags: [],
};

function preparation(flags: BatchHostFlags) {
  return {
    flags: { sandbox: "off" as const, ...flags },
    cwd: root,
    state: projectState({ cwd: root, env: {}, stateDir: join(root, "state") }),
    environment,
    loop: () => ({}),
    given: { "mcp-config": '{"mcpServers":{}}' },
    reader,
    host: { env: {}, warn: (line: string) => notices.push(line) },
  };
}

describe("preparing a batch on its run environment (R-A4)", () => {
  it("R-F4, R-S6: a new local batch gets its plan, its items' Bash and the first requests' estimate; skipped files are said once", async () => {
    const prepared = await prepareLocalBatch(preparation({ files: "*", prompt: "Summarize {{file}}" }));
    if (!prepared.ok) throw prepared.error;
    const { plan, bash, estimate, servers } = prepared.value;
    expect(plan.kind).toBe("new");
    expect(bash).toBeDefined();
    expect(servers).toBeDefined();
    expect(estimate?.items).toEqual(["a.txt"]);
    expect(notices.join("\n")).toContain("b.bin");
  });

  it("R-A4: a composition refusal comes back as the answer, before anything is estimated", async () => {
    const prepared = await prepareLocalBatch(preparation({ prompt: "p" }));
    expect(prepared.ok).toBe(false);
    expect(!prepared.ok && prepared.error.code).toBe("invalid_batch");
  });

  it("R-B1, R-M1: a queued batch goes to Redis without this host's MCP config files and start flags; only a dry run is estimated", async () => {
    const flags = { files: "*.txt", prompt: "Summarize {{file}}", "mcp-config": ['{"mcpServers":{}}'] };
    const enqueued = await prepareQueuedBatch({ ...preparation(flags), dryRun: false });
    if (!enqueued.ok) throw enqueued.error;
    expect(enqueued.value.plan.spec).not.toHaveProperty("mcpConfig");
    expect(enqueued.value.plan.spec).not.toHaveProperty("startFlags");
    expect(enqueued.value.mcpServers).toEqual([]);
    expect(enqueued.value.estimate).toBeUndefined();
    const dryRun = await prepareQueuedBatch({ ...preparation(flags), dryRun: true });
    expect(dryRun.ok && dryRun.value.estimate?.items).toHaveLength(1);
  });
});
