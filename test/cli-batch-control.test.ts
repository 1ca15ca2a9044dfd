import { access, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliInProcess, type SimHandle, startSimInProcess } from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/** Batch control and the report through the CLI: dry run, budget, JSON summary, list/status, the report. */
let dir: string;
let sim: SimHandle;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-batch-control-"));
  await mkdir(join(dir, "src"));
  for (let index = 0; index < 5; index++)
    await writeFile(join(dir, "src", `f${index}.ts`), `export const f${index} = ${index};\n`);
  await writeFile(join(dir, "src", "pipe|name.ts"), "export const piped = 1;\n");
  sim = await startSimInProcess(dir);
});
afterAll(async () => {
  await sim?.stop();
  await rm(dir, { recursive: true, force: true });
});

const batch = (args: string[], env: Record<string, string> = sim.env) =>
  runCliInProcess(["batch", ...args], { cwd: dir, env });
const messageRequests = async () =>
  (await sim.requests()).filter((record) => record.path.startsWith("/v1/messages")).length;
const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe("batch control and a report that holds the answers", () => {
  it("--dry-run lists the items and estimates the first requests; nothing is sent or created", async () => {
    const result = await batch([
      "--files",
      "src/*.ts",
      "--prompt",
      "Summarize {{file}}",
      "--dry-run",
      "--id",
      "dry",
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("dry run: 6 items\n  src/f0.ts\n");
    expect(result.stdout).toMatch(
      /first requests: a [\d.]+k-token shared prefix \(written once, read by the other 5\)/,
    );
    expect(result.stdout).toMatch(
      /estimated cost of the first requests: at least \$0\.\d{4} at claude-sonnet-4-6's prices/,
    );
    expect(await messageRequests()).toBe(0);
    expect((await batch(["status", "dry"])).code).toBe(2);
  });

  it("--max-budget-usd stops starting items when the spend would pass it: exit 10, the rest pending", async () => {
    const args = [
      "--files",
      "src/f*.ts",
      "--prompt",
      "Summarize {{file}}",
      "--concurrency",
      "1",
      "--id",
      "capped",
    ];
    // The simulator prices the first item at about $0.013 (it writes the cache), the rest at about $0.003.
    const capped = await batch([...args, "--max-budget-usd", "0.02"]);
    expect(capped.code, capped.stderr).toBe(10);
    expect(capped.stderr).toContain("--max-budget-usd 0.02 reached: 4 items not started");
    expect(capped.stdout).toContain("5 items: 1 succeeded, 0 failed, 4 not finished");
  });

  it("batch status shows the stopped batch and how to resume it", async () => {
    const status = await batch(["status", "capped"]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain("batch capped · stopped (resume it)");
    expect(status.stdout).toContain("resume: forkloop batch --resume capped");
  });

  it("a resume with a higher budget finishes; batch list shows it finished", async () => {
    const resumed = await batch(["--resume", "capped", "--max-budget-usd", "1"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("5 items: 5 succeeded, 0 failed");
    const list = await batch(["list"]);
    expect(list.stdout).toMatch(
      /^capped {2}\S+ {2}5\/5 succeeded, 0 failed, 0 pending {2}\$0\.\d{4} {2}finished {2}--files src\/f\*\.ts$/m,
    );
  });

  it("--output-format json prints the summary as one object; report.md and report.json hold every answer", async () => {
    const result = await batch(
      ["--files", "src/*.ts", "--prompt", "Summarize {{file}}", "--output-format", "json", "--id", "answers"],
      {},
    );
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as {
      type: string;
      status: string;
      simulated: boolean;
      totals: { items: number; succeeded: number };
      items: { label: string; text: string; transcript: string; durationMs: number }[];
      paths: { markdown: string; json: string };
    };
    expect(summary).toMatchObject({ type: "batch_result", status: "succeeded", simulated: true });
    expect(summary.totals).toMatchObject({ items: 6, succeeded: 6 });
    const piped = summary.items.find((item) => item.label === "src/pipe|name.ts");
    expect(piped?.text).toContain("pipe|name.ts");
    expect(await exists(piped?.transcript ?? "")).toBe(true);

    const markdown = await readFile(summary.paths.markdown, "utf8");
    expect(markdown).toContain("cost $");
    expect(markdown).toMatch(/cost \$0\.\d{4} \(simulated\)/);
    expect(markdown).toMatch(/^\| \d \| src\/pipe\\\|name\.ts \| succeeded \| \d \| /m);
    expect(markdown).toContain(
      `### 1. src/f0.ts — succeeded\n\n\`\`\`text\n${summary.items[0]?.text}\n\`\`\``,
    );
    const json = JSON.parse(await readFile(summary.paths.json, "utf8")) as { items: { text: string }[] };
    expect(json.items.map((item) => item.text)).toEqual(summary.items.map((item) => item.text));
  });
});
