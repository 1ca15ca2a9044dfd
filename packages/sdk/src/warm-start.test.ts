import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RuntimeRegistry } from "./shared-runtime.js";
import { collectMessages, startHarness } from "./test-support/sdk-harness.js";
import { prewarm, startup } from "./warm-start.js";

type Harness = Awaited<ReturnType<typeof startHarness>>;

describe("R-X2, R-A4: a warm start authenticates as a cold query does", () => {
  let harness: Harness;
  let home: string;
  beforeAll(async () => {
    harness = await startHarness(() => undefined);
    home = realpathSync(mkdtempSync(join(tmpdir(), "forkloop-warm-home-")));
  });
  afterAll(async () => {
    await harness.close();
    rmSync(home, { recursive: true, force: true });
  });

  /** No key in the environment: only the simulator's URL and the settings' apiKeyHelper. */
  const helperOptions = (key: string) =>
    harness.options({
      env: { ANTHROPIC_BASE_URL: harness.sim.url, HOME: home },
      settings: { apiKeyHelper: `printf '%s\\n' '${key}'` },
    });

  async function keysSince(from: number): Promise<string[]> {
    return harness.sim
      .requests()
      .slice(from)
      .filter((record) => record.querySource === "sdk")
      .map((record) => `${record.headers["x-api-key"] ?? ""} | ${record.headers.authorization ?? ""}`);
  }

  it("R-X2, R-A4: startup() and prewarm() resolve the settings' apiKeyHelper as the query does: its key authenticates the requests, and the query uses the warmed runtime", async () => {
    const runtimes = new RuntimeRegistry();
    const before = harness.sim.requests().length;
    // Without the helper the warm start saw a base URL and no key, and failed before any query.
    const warm = await startup({ options: helperOptions("warm-key-startup"), runtimes });
    expect(runtimes.started).toBe(1);
    const messages = await collectMessages(warm.query("hello"));
    expect(messages.at(-1)).toMatchObject({ type: "result", subtype: "success" });
    expect(messages[0]).toMatchObject({ type: "system", subtype: "init", apiKeySource: "apiKeyHelper" });
    // The query found the warm runtime: nothing else was started.
    expect(runtimes.started).toBe(1);
    expect(await keysSince(before)).toEqual(["warm-key-startup | Bearer warm-key-startup"]);

    const claimedAt = harness.sim.requests().length;
    const spare = await prewarm({ options: helperOptions("warm-key-prewarm"), runtimes });
    expect(runtimes.started).toBe(2);
    const run = spare.claim({ prompt: "hello", options: { cwd: harness.dir } });
    expect((await collectMessages(run)).at(-1)).toMatchObject({ type: "result", subtype: "success" });
    expect(runtimes.started).toBe(2);
    expect(await keysSince(claimedAt)).toEqual(["warm-key-prewarm | Bearer warm-key-prewarm"]);
    await spare.exited;
  });
});
