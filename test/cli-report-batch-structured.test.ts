import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliInProcess, type SimHandle, startSimInProcess } from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, launchChromium, openReport } from "./support/chromium.js";

/**
 * R-B6, R-V1: a `--json-schema` batch (the CLI against a scripted simulator) with `--report`: the
 * HTML report in headless Chromium has a structured output column holding each item's validated
 * output; a batch without a schema has no such column (the control).
 */
let dir: string;
let sim: SimHandle;
let browser: Browser;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-report-structured-"));
  await writeFile(join(dir, "tasks.jsonl"), '"one"\n"two"\n');
  await writeFile(
    join(dir, "schema.json"),
    JSON.stringify({
      type: "object",
      properties: { finding: { type: "string" } },
      required: ["finding"],
      additionalProperties: false,
    }),
  );
  await writeFile(
    join(dir, "scenario.json"),
    JSON.stringify({
      rules: [
        {
          match: { lastUserText: "Look at one." },
          reply: { content: [{ type: "text", text: '{"finding":"f-one"}' }] },
        },
        {
          match: { lastUserText: "Look at two." },
          reply: { content: [{ type: "text", text: '{"finding":"f-two"}' }] },
        },
      ],
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

const cells = (column: string) => `.vt-body .vt-cell[data-column="${column}"]`;

describe("R-B6: structured output in the HTML report (R-V1)", () => {
  it("R-B6: a --json-schema batch's report has a structured output column with each item's output; the control without a schema has none", async () => {
    const { page, errors, network } = await openReport(
      browser,
      await reportOf("with", ["--json-schema", "schema.json"]),
    );
    await page.waitForSelector(cells("structuredOutput"));
    const outputs = await page.$$eval(cells("structuredOutput"), (nodes) =>
      nodes.map((node) => node.textContent),
    );
    expect(outputs.sort()).toEqual(['{"finding":"f-one"}', '{"finding":"f-two"}']);
    expect(await page.textContent(".vt-header")).toContain("structured output");
    expect(errors).toEqual([]);
    expect(network).toEqual([]);
    await page.close();

    const control = await openReport(browser, await reportOf("without", []));
    await control.page.waitForSelector(cells("answer"));
    expect(await control.page.$$eval(cells("structuredOutput"), (nodes) => nodes.length)).toBe(0);
    await control.page.close();
  });
});
