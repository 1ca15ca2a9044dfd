import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { batchStateDir, runCliInProcess, type SimHandle, startSimInProcess } from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, launchChromium, openReport } from "./support/chromium.js";

/**
 * R-B7, R-V1: a batch with `--reduce` (the CLI against a scripted simulator) and `--report`: the
 * HTML report in headless Chromium shows the reduce's answer — the batch's result — as text
 * before the totals, with what it read; a batch without one has no such section (the control).
 */
let dir: string;
let sim: SimHandle;
let browser: Browser;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-report-reduce-"));
  await writeFile(join(dir, "tasks.jsonl"), '"one"\n"two"\n');
  await writeFile(
    join(dir, "scenario.json"),
    JSON.stringify({
      rules: [
        {
          match: { lastUserText: "The batch's items have finished" },
          reply: { content: [{ type: "text", text: "RESULT <b>two</b> findings" }] },
        },
      ],
      fallback: { content: [{ type: "text", text: "a finding" }] },
    }),
  );
  sim = await startSimInProcess(dir, ["--scenario", "scenario.json"]);
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await sim?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function reportOf(id: string, extra: string[]): Promise<string> {
  const result = await runCliInProcess(
    ["batch", "--items", "tasks.jsonl", "--prompt", "Look at {{item}}.", "--id", id, "--report", ...extra],
    { cwd: dir, env: sim.env },
  );
  expect(result.code, result.stderr).toBe(0);
  return /^html: +(.+\.html)$/m.exec(result.stdout)?.[1] ?? "";
}

describe("R-B7: the reduce in the HTML report (R-V1)", () => {
  it("R-B7: the result section shows the reduce's answer as text and what it read; the control without --reduce has none", async () => {
    const { page, errors, network } = await openReport(
      browser,
      await reportOf("with", ["--reduce", "Sum up."]),
    );
    expect(await page.getAttribute(".reduce", "data-reduce-status")).toBe("succeeded");
    expect(await page.textContent(".reduce-answer")).toBe("RESULT <b>two</b> findings");
    expect(await page.$$eval(".reduce b", (nodes) => nodes.length)).toBe(0);
    expect(await page.textContent(".reduce .muted")).toContain("over 2 items");
    // The totals count the reduce's cost beside the items' (R-B7), as report.json's do.
    const json = JSON.parse(await readFile(join(batchStateDir(dir, "with"), "report.json"), "utf8"));
    const itemsCost = json.items.reduce((sum: number, item: { costUsd: number }) => sum + item.costUsd, 0);
    expect(json.reduce.costUsd).toBeGreaterThan(0);
    expect(Number(await page.getAttribute('[data-figure="costUsd"]', "data-value"))).toBeCloseTo(
      itemsCost + json.reduce.costUsd,
      10,
    );
    expect(errors).toEqual([]);
    expect(network).toEqual([]);
    await page.close();

    const control = await openReport(browser, await reportOf("without", []));
    expect(await control.page.$$eval(".reduce", (nodes) => nodes.length)).toBe(0);
    await control.page.close();
  });
});
