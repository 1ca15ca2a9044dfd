import { access, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readJournal } from "@forkloop/batch";
import { batchStateDir, runCliInProcess, startCli, waitForOutput } from "@forkloop/cli/testing";
import { startSimulator } from "@forkloop/sim";
import { toolThenTextBrain } from "@forkloop/sim/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Through the built CLI: an item killed (kill -9) while its Bash command runs is
 * redone from scratch on resume — the command really runs twice — and the journal's side_effect
 * record makes the report list the item under "May have run twice".
 */
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-side-effects-"));
  await writeFile(join(dir, "items.jsonl"), '{"n":1}\n');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe("side effects repeat on resume, and the report says so", () => {
  it("an item killed while its Bash runs is redone on resume and listed as 'may have run twice' (report.md, results.jsonl, the totals line)", async () => {
    // Every item calls Bash once, then answers in text.
    const server = await startSimulator({
      brain: toolThenTextBrain(
        { name: "Bash", input: { command: "echo ran >> ran.log; sleep 2" } },
        "appended",
      ),
    });
    const env = { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.url };
    try {
      const first = startCli(
        [
          "batch",
          "--items",
          "items.jsonl",
          "--prompt",
          "Append to ran.log ({{item.n}}).",
          "--permission-mode",
          "bypassPermissions",
          "--sandbox",
          "off",
          // In place: an isolated item's redo starts from a clean copy (R-B3, tested apart); the
          // subject here is a side effect in the shared tree that a redo repeats.
          "--no-isolate",
          "--id",
          "twice",
        ],
        { cwd: dir, env },
      );
      await waitForOutput(first.child, first.stderr, (text) => text.includes("state in"));
      const ranLog = join(dir, "ran.log");
      while (!(await exists(ranLog))) await new Promise((resolve) => setTimeout(resolve, 25));
      first.child.kill("SIGKILL");
      await first.exited;

      const batchDir = batchStateDir(dir, "twice");
      const killed = await readJournal(batchDir);
      expect(killed.records.map((record) => record.type)).toContain("side_effect");
      expect(killed.records.map((record) => record.type)).not.toContain("completed");

      const resumed = await runCliInProcess(["batch", "--resume", "twice"], { cwd: dir, env });
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain("1 may have run twice");
      // The command did run twice: that is what the report warns about.
      expect((await readFile(ranLog, "utf8")).trim().split("\n")).toEqual(["ran", "ran"]);
      const markdown = await readFile(join(batchDir, "report.md"), "utf8");
      expect(markdown).toMatch(/## May have run twice[\s\S]*- \S+: attempt 1 \(Bash\)/);
      const [row] = (await readFile(join(batchDir, "results.jsonl"), "utf8"))
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line));
      expect(row.status).toBe("succeeded");
      expect(row.mayHaveRunTwice).toEqual([expect.objectContaining({ attempt: 1, tool: "Bash" })]);
    } finally {
      await server.close();
    }
  });
});
