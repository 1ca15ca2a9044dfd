import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { projectState } from "@forkloop/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseQueueUrl } from "./queue-connection.js";
import { type QueueServiceOptions, startQueueService } from "./queue-service.js";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "forkloop-queue-service-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A local port nothing listens on: Redis there refuses the connection at once. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as { port: number };
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

async function options(overrides: Partial<QueueServiceOptions>): Promise<QueueServiceOptions> {
  return {
    address: parseQueueUrl(`redis://127.0.0.1:${await closedPort()}`),
    cwd: root,
    state: projectState({ cwd: root, env: {}, stateDir: join(root, "state") }),
    env: { HOME: root, PATH: process.env.PATH },
    trustProject: false,
    sandbox: "off",
    concurrency: 2,
    allowBypassPermissions: false,
    log: () => {},
    onEvent: () => {},
    ...overrides,
  };
}

describe("forkloop worker's host (R-A4: the worker resolves its run environment through the one resolver)", () => {
  it("R-M1, R-B1: a bad MCP configuration is refused before Redis is contacted; with a good one, the unreachable Redis is what fails", async () => {
    const missing = join(root, "no-such-mcp.json");
    const bad = startQueueService(await options({ mcpConfig: [missing] }));
    await expect(bad).rejects.toThrow("no-such-mcp.json");
    await expect(bad).rejects.not.toMatchObject({ code: "queue_unreachable" });
    // Control: the same host without the bad file gets as far as Redis.
    await expect(startQueueService(await options({}))).rejects.toMatchObject({ code: "queue_unreachable" });
  });
});
