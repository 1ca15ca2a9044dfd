import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { runCli, startCli, waitForOutput } from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-cli-signals-"));
  await writeFile(join(dir, "notes.md"), "# Notes\nsignals and pipes\n");
  await mkdir(join(dir, "src"));
  for (let index = 0; index < 6; index++)
    await writeFile(join(dir, "src", `f${index}.ts`), `export const f${index} = ${index};\n`);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const slowBatch = (id: string) =>
  startCli(
    ["batch", "--files", "src/*.ts", "--prompt", "Summarize {{file}}", "--concurrency", "2", "--id", id],
    { cwd: dir, env: { FORKLOOP_SIM_FAULTS: "slow@1+:slow_ms=40" } },
  );

describe("R-R8: signals and pipes, through the built binary", () => {
  it("stdout closed by its reader (`| head -1`): the run stops quietly, exit 141, no EPIPE stack trace", async () => {
    const run = startCli(
      ["run", "Summarize notes.md", "--output-format", "stream-json", "--include-partial-messages"],
      { cwd: dir, env: { FORKLOOP_SIM_LATENCY: "realistic" } },
    );
    await waitForOutput(run.child, run.stdout, (text) => text.includes("\n"));
    // What `head -1` does after its line: close the read end while the run is still writing.
    run.child.stdout?.destroy();
    const result = await run.exited;
    expect(result.stderr).not.toMatch(/EPIPE|Error:|at .*\.js:\d+/);
    expect(result.code).toBe(141);
  });

  it("SIGTERM stops a batch like Ctrl+C — report written, resumable — and exits 143", async () => {
    const batch = slowBatch("term");
    await waitForOutput(batch.child, batch.stderr, (text) => /^ok /m.test(text));
    batch.child.kill("SIGTERM");
    const stopped = await batch.exited;
    expect(stopped.code).toBe(143);
    expect(stopped.stdout).toMatch(/6 items: \d succeeded, 0 failed, \d not finished/);
    expect(stopped.stderr).toContain("interrupted: resume with `forkloop batch --resume term`");
    const resumed = await runCli(["batch", "--resume", "term"], { cwd: dir });
    expect(resumed.stdout).toMatch(/6 items: 6 succeeded, 0 failed/);
  });

  it("two SIGINTs a few ms apart (`timeout -s INT`) count as one: the batch still writes its report", async () => {
    const batch = slowBatch("twice");
    await waitForOutput(batch.child, batch.stderr, (text) => /^ok /m.test(text));
    batch.child.kill("SIGINT");
    await sleep(5);
    batch.child.kill("SIGINT");
    const stopped = await batch.exited;
    expect(stopped.code).toBe(130);
    expect(stopped.stdout).toMatch(/6 items: \d succeeded, 0 failed, \d not finished/);
    expect(stopped.stdout).toContain("report:");
  });
});
