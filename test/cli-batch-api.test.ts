import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  batchStateDir,
  runCliInProcess,
  type SimHandle,
  type SimRequestRecord,
  startCli,
  startSimInProcess,
  waitForOutput,
} from "@forkloop/cli/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

/**
 * R-B8–R-B10: `forkloop batch --api batches` against `forkloop sim` in this process, whose Message
 * Batches endpoints take simulated time, bill at batch prices and, scripted (`--batch-script`),
 * error, expire or cancel. The CLI runs in this process (`runCliInProcess`) except where the
 * process is the subject: the built binary is spawned to be killed with -9 and sent Ctrl+C.
 * Everything goes through the official SDK over HTTP; the simulator's request log is the
 * evidence (each batch entry is recorded with its body).
 * Batch processing page: https://platform.claude.com/docs/en/build-with-claude/batch-processing
 */

let dir: string;
let sim: SimHandle | undefined;
const FILES = ["a", "b", "c", "d", "e"];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-batch-api-"));
  await mkdir(join(dir, "src"));
  for (const [i, name] of FILES.entries()) {
    await writeFile(join(dir, "src", `${name}.ts`), `// module ${name}\nexport const v${i} = ${i};\n`);
  }
});
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
  await rm(dir, { recursive: true, force: true });
});

/** Fast polling and short rounds: the simulator's batches take hundreds of ms, not hours. */
const FAST = { FORKLOOP_BATCH_POLL_MS: "40", FORKLOOP_BATCH_ROUND_WAIT_MS: "1500" };
const args = (id: string) => [
  "batch",
  "--files",
  "src/*.ts",
  "--prompt",
  "Summarize {{file}}",
  "--api",
  "batches",
  "--id",
  id,
];

/** Batch entries the simulator ran or answered (`/v1/messages/batches/{id}#{custom_id}`). */
const entriesOf = (records: readonly SimRequestRecord[]) => records.filter((r) => r.path.includes("#"));
const batchIdOf = (record: SimRequestRecord) => record.path.split("/").at(-1)!.split("#")[0]!;
/** The request an entry carried, without its metadata: the same request sent twice has one digest. */
const digestOf = (record: SimRequestRecord) => {
  const { metadata: _m, ...params } = JSON.parse(record.rawBody) as Record<string, unknown>;
  return createHash("sha256").update(JSON.stringify(params)).digest("hex");
};

/** The batch's results.jsonl, one object an item (the state under `home`, the project by default). */
async function resultLines(id: string, home = dir) {
  const text = await readFile(join(batchStateDir(dir, id, home), "results.jsonl"), "utf8");
  return text
    .trim()
    .split("\n")
    .map(
      (line) =>
        JSON.parse(line) as {
          id: string;
          status: string;
          costUsd: number;
          onlineCostUsd?: number;
          turns: number;
          usage: { apiCalls: number };
          label: string;
          applied: string[];
          structured_output: unknown;
        },
    );
}

// A simulator process and CLIs (two spawned) on a shared 2-core machine: minutes, not 30 s.
describe("R-B8: forkloop batch --api batches", { timeout: 180_000 }, () => {
  it("R-B8, R-B9: each round is one Message Batch; no request goes online; every entry once; the prefix cached for 1 hour; batch prices with the online price beside them", async () => {
    sim = await startSimInProcess(dir, ["--batch-processing-ms", "200"]);
    const run = await runCliInProcess(args("rounds"), { cwd: dir, env: { ...sim.env, ...FAST } });
    expect(run.code, run.stderr).toBe(0);
    const records = await sim.requests();
    expect(records.filter((r) => r.path === "/v1/messages")).toHaveLength(0);
    const entries = entriesOf(records);
    const lines = await resultLines("rounds");
    expect(lines.map((l) => l.status)).toEqual(FILES.map(() => "succeeded"));
    // One entry per turn of every item, none sent twice.
    expect(entries).toHaveLength(lines.reduce((sum, l) => sum + l.turns, 0));
    expect(new Set(entries.map(digestOf)).size).toBe(entries.length);
    // One batch creation per round the progress names.
    const rounds = run.stderr.match(/^round \d+: message batch \S+ sent/gm) ?? [];
    expect(new Set(entries.map(batchIdOf)).size).toBe(rounds.length);
    expect(rounds.length).toBeLessThan(entries.length); // items share rounds
    // The shared prefix (system) is written with the 1-hour TTL (batch processing page).
    for (const entry of entries) {
      const system = (JSON.parse(entry.rawBody) as { system: { cache_control?: { ttl?: string } }[] }).system;
      expect(system.at(-1)?.cache_control).toEqual({ type: "ephemeral", ttl: "1h" });
    }
    // Batch prices: half of the online price of the same tokens, in results.jsonl and the reports.
    for (const line of lines) expect(line.onlineCostUsd).toBeCloseTo(line.costUsd * 2, 10);
    expect(run.stdout).toMatch(/at Message Batches prices — online \$[\d.]+, saved \$[\d.]+ \(50%\)/);
    const report = JSON.parse(await readFile(join(batchStateDir(dir, "rounds"), "report.json"), "utf8"));
    expect(report.totals.onlineCostUsd).toBeCloseTo(report.totals.costUsd * 2, 10);
    expect(await readFile(join(batchStateDir(dir, "rounds"), "report.md"), "utf8")).toContain(
      "at Message Batches prices",
    );
  });

  it("R-B10: kill -9 while a round is processing, then --resume: the open batch is polled, no entry is sent twice, no item settles twice", async () => {
    sim = await startSimInProcess(dir, ["--batch-processing-ms", "2500"]);
    const env = { ...sim.env, ...FAST };
    const first = startCli(args("killed"), { cwd: dir, env });
    await waitForOutput(first.child, first.stderr, (text) => /^round 2: message batch/m.test(text));
    first.child.kill("SIGKILL");
    await first.exited;
    const [, open, sent] = /^round 2: message batch (\S+) sent \((\d+) entr/m.exec(first.stderr())!;

    const resumed = await runCliInProcess(["batch", "--resume", "killed"], { cwd: dir, env });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(
      `${open} (sent by an earlier run): polled for its answers, not sent again`,
    );
    const entries = entriesOf(await sim.requests());
    // Every request went once: the killed round's entries were answered, not sent again.
    expect(new Set(entries.map(digestOf)).size).toBe(entries.length);
    // The killed round's batch ran its entries once (the simulator runs them when polled).
    expect(entries.filter((e) => batchIdOf(e) === open)).toHaveLength(Number(sent));
    const lines = await resultLines("killed");
    expect(lines.map((l) => l.id).sort()).toEqual([...new Set(lines.map((l) => l.id))].sort());
    expect(lines).toHaveLength(FILES.length);
    expect(lines.every((l) => l.status === "succeeded")).toBe(true);
    expect(entries).toHaveLength(lines.reduce((sum, l) => sum + l.turns, 0));
  });

  it("R-B8, R-B10: an entry that errors, a batch that expires and a batch canceled part way are recovered: only their unanswered entries go again", async () => {
    // Batch 1 is the warming item alone; then entry 1 of batch 2 is overloaded, batch 3 expires
    // after its first entry ran and batch 4 is canceled before any ran.
    sim = await startSimInProcess(dir, [
      "--batch-processing-ms",
      "150",
      "--batch-script",
      "529@2.1,expire@3:after=1,cancel@4",
    ]);
    const run = await runCliInProcess(args("recovered"), { cwd: dir, env: { ...sim.env, ...FAST } });
    expect(run.code, run.stderr).toBe(0);
    const lines = await resultLines("recovered");
    expect(lines.every((l) => l.status === "succeeded")).toBe(true);
    const records = await sim.requests();
    const entries = entriesOf(records);
    const ran = entries.filter((e) => e.status === 200);
    // Every answered request ran once; the failed ones were sent again in later rounds.
    expect(new Set(ran.map(digestOf)).size).toBe(ran.length);
    expect(ran).toHaveLength(lines.reduce((sum, l) => sum + l.turns, 0));
    const errored = entries.filter((e) => e.status === 529);
    expect(errored).toHaveLength(1);
    expect(ran.map(digestOf)).toContain(digestOf(errored[0]!));
    expect(run.stderr).toMatch(/ended: .*expired/);
    expect(run.stderr).toMatch(/ended: .*canceled/);
    expect(run.stderr).toMatch(/retrying .*scripted error for entry 1 of batch 2/);
  });

  it("R-B8, R-B2, R-B6: --api batches with isolated items and --json-schema: each item edits its own copy under the user's forkloop state, every change reaches the project once, every answer is structured", async () => {
    sim = await startSimInProcess(dir, ["--batch-processing-ms", "100"]);
    // The user's home outside the project: items' copies live in ~/.forkloop, forkloop's own directory.
    const home = await mkdtemp(join(tmpdir(), "forkloop-batch-api-home-"));
    try {
      for (const name of FILES)
        await writeFile(join(dir, "src", `${name}.ts`), "export const oldName = 1;\nuse(oldName);\n");
      const git = (...args: string[]) =>
        execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd: dir });
      git("init", "-q");
      git("add", "-A");
      git("commit", "-qm", "base");
      const schema = join(home, "schema.json");
      await writeFile(
        schema,
        JSON.stringify({
          type: "object",
          properties: { summary: { type: "string" } },
          required: ["summary"],
          additionalProperties: false,
        }),
      );
      const run = await runCliInProcess(
        [
          "batch",
          "--files",
          "src/*.ts",
          "--prompt",
          "Please rename oldName to newName in {{file}}",
          "--api",
          "batches",
          "--isolate",
          "--json-schema",
          schema,
          "--permission-mode",
          "acceptEdits",
          "--id",
          "iso",
        ],
        { cwd: dir, env: { ...sim.env, ...FAST, HOME: home } },
      );
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain("items are isolated");
      for (const name of FILES)
        expect(await readFile(join(dir, "src", `${name}.ts`), "utf8"), name).toBe(
          "export const newName = 1;\nuse(newName);\n",
        );
      const lines = await resultLines("iso", home);
      for (const line of lines) {
        expect(line.status).toBe("succeeded");
        expect(line.applied, line.label).toEqual([line.label]);
        expect(line.structured_output).toEqual({ summary: expect.any(String) });
      }
      const records = await sim.requests();
      expect(records.filter((r) => r.path === "/v1/messages")).toHaveLength(0);
      for (const entry of entriesOf(records))
        expect(JSON.parse(entry.rawBody).output_config?.format?.type).toBe("json_schema");
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });

  it("R-B8: --max-turns and --max-budget-usd hold with --api batches (budgets at batch prices)", async () => {
    sim = await startSimInProcess(dir, ["--batch-processing-ms", "100"]);
    const env = { ...sim.env, ...FAST };
    const oneTurn = await runCliInProcess([...args("one-turn"), "--max-turns", "1"], { cwd: dir, env });
    const lines = await resultLines("one-turn");
    // Each item stops after its one turn: one model call each, no second round for anyone.
    expect(
      lines.every((l) => l.usage.apiCalls === 1 && l.status === "failed"),
      oneTurn.stderr,
    ).toBe(true);
    expect(oneTurn.stderr).toContain("max_turns");
    expect(entriesOf(await sim.requests())).toHaveLength(FILES.length);

    const budget = await runCliInProcess([...args("budget"), "--max-budget-usd", "0.000001"], {
      cwd: dir,
      env,
    });
    expect(budget.code, budget.stderr).toBe(10);
    expect(budget.stderr).toContain("--max-budget-usd 0.000001 reached");
    const budgetLines = await resultLines("budget");
    expect(budgetLines.filter((l) => l.status === "pending").length).toBeGreaterThan(0);
  });

  it("R-B10: Ctrl+C leaves the open batch recorded for --resume; a second Ctrl+C cancels it and says which", async () => {
    sim = await startSimInProcess(dir, ["--batch-processing-ms", "60000"]);
    const env = { ...sim.env, ...FAST };
    const first = startCli(args("ctrl-c"), { cwd: dir, env });
    await waitForOutput(first.child, first.stderr, (text) => /^round 1: message batch/m.test(text));
    const [, open] = /^round 1: message batch (\S+) sent/m.exec(first.stderr())!;
    first.child.kill("SIGINT");
    await waitForOutput(first.child, first.stderr, (text) => text.includes("Ctrl+C again within"));
    expect(first.stderr()).toContain(`${open} still processing: recorded, so --resume polls it`);
    // A repeat within 300 ms is the same key press (process-stop.ts); this one is a second press.
    await new Promise((resolve) => setTimeout(resolve, 500));
    first.child.kill("SIGINT");
    const exited = await first.exited;
    expect(exited.code).toBe(130);
    expect(exited.stderr).toContain(`cancelled the open message batch (a second Ctrl+C): ${open}`);
    const records = await sim.requests();
    expect(records.some((r) => r.path === `/v1/messages/batches/${open}/cancel` && r.status === 200)).toBe(
      true,
    );
  });

  it("R-B8: bad input — an endpoint without the Batches API is exit 2 naming it and the fix; --api with --queue or an unknown value is exit 2", async () => {
    const server: Server = createServer((_req, res) => {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ type: "error", error: { type: "not_found_error", message: "Not found" } }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const run = await runCliInProcess(args("no-api"), {
        cwd: dir,
        env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: url, ...FAST },
      });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(`--api batches: ${url} has no Message Batches API`);
      expect(run.stderr).toContain("drop --api batches");
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    const unknown = await runCliInProcess([...args("bad"), "--api", "nope"], { cwd: dir });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("must be messages or batches");
    const queued = await runCliInProcess([...args("queued"), "--queue", "redis://127.0.0.1:1"], { cwd: dir });
    expect(queued.code).toBe(2);
    expect(queued.stderr).toContain("--api batches needs a local batch");
  });
});
