import { mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliInProcess } from "@forkloop/cli/testing";
import { startSimulator } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * R-T6: a batch item is not offered WebSearch — its search would need a session's model client and
 * cost ledger, which a batch's items do not have — while WebFetch (the control) is offered.
 */
let dir: string;
let sim: Awaited<ReturnType<typeof startSimulator>>;
const offered: string[][] = [];
beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "forkloop-batch-web-search-")));
  await writeFile(join(dir, "items.jsonl"), '{"n":1}\n');
  sim = await startSimulator({
    brain: (request) => {
      offered.push([...request.toolNames]);
      return { content: [{ type: "text", text: "done" }], adaptiveThinking: false };
    },
  });
});
afterAll(async () => {
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

describe("R-T6: WebSearch and batch items", () => {
  it("R-T6: a batch item's tools leave out WebSearch and keep WebFetch", async () => {
    const result = await runCliInProcess(
      ["batch", "--items", "items.jsonl", "--prompt", "Look at item {{item.n}}", "--id", "w"],
      { cwd: dir, env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: sim.url } },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(offered.length).toBeGreaterThan(0);
    for (const names of offered) {
      expect(names).toContain("WebFetch");
      expect(names).not.toContain("WebSearch");
    }
  });
});
