import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  batchStateDir,
  runCliInProcess,
  type SimHandle,
  startSimInProcess,
  writeScenario,
} from "@forkloop/cli/testing";
import { loadTranscript } from "@forkloop/orchestrator";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, launchChromium, openReport, screenshot } from "./support/chromium.js";

// R-V1 "Done when": the report of a REAL 100-item batch (the CLI against a scripted
// `forkloop sim`: a tenth of the items fail, a third read a file first, one request meets a 429
// that pauses the pool) sorts, filters, opens an item's page, and its totals equal report.json.

const ITEMS = 100;
let dir: string;
let sim: SimHandle;
let browser: Browser;
let reportPath: string;
let batchDir: string;

interface ResultLine {
  id: string;
  label: string;
  status: string;
  costUsd: number;
  error: { code: string } | null;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-report-batch-"));
  await writeFile(join(dir, "notes.md"), "# Notes\nalpha beta gamma\n");
  const tasks = Array.from({ length: ITEMS }, (_, index) =>
    index % 10 === 7 ? `poison ${index}` : index % 3 === 0 ? `read the notes ${index}` : `answer ${index}`,
  );
  await writeFile(join(dir, "tasks.jsonl"), tasks.map((task) => `${JSON.stringify({ task })}\n`).join(""));
  const scenario = await writeScenario(
    join(dir, "scenario.json"),
    [
      { match: { lastUserText: "poison" }, fault: "400" },
      {
        match: { lastUserText: "read the notes" },
        reply: { content: [{ type: "tool_use", name: "Read", input: { file_path: "notes.md" } }] },
      },
    ],
    "done <b>bold</b> (scripted)",
  );
  sim = await startSimInProcess(dir, ["--scenario", scenario, "--faults", "429@5:retry_after=1"]);
  browser = await launchChromium();
  const batch = await runCliInProcess(
    [
      "batch",
      "--items",
      "tasks.jsonl",
      "--prompt",
      "Do {{item.task}}",
      "--id",
      "hundred",
      "--concurrency",
      "8",
      "--report",
    ],
    { cwd: dir, env: sim.env },
  );
  expect(batch.code, batch.stderr).toBe(6);
  reportPath = /^html: +(.+\.html)$/m.exec(batch.stdout)?.[1] ?? "";
  batchDir = batchStateDir(dir, "hundred");
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await sim?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function results(): Promise<ResultLine[]> {
  const text = await readFile(join(batchDir, "results.jsonl"), "utf8");
  return text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as ResultLine);
}

/** The rows the virtual table has built right now: item id and the status and cost cells. */
function visibleRows(page: Page) {
  return page.$$eval(".vt-spacer .vt-row", (rows) =>
    rows
      .map((row) => ({
        index: Number(row.getAttribute("data-index")),
        id: row.getAttribute("data-key"),
        status: row.querySelector('[data-column="status"]')?.textContent,
        answer: row.querySelector('[data-column="answer"]')?.textContent,
      }))
      .sort((a, b) => a.index - b.index),
  );
}

describe("forkloop report <batch> in headless Chromium (R-V1)", () => {
  it("R-V1: the 100-item batch report's totals equal report.json; failures are grouped by error; the 429 pause is shown; no console error, no network", async () => {
    const { page, errors, network } = await openReport(browser, reportPath);
    const report = JSON.parse(await readFile(join(batchDir, "report.json"), "utf8")) as {
      totals: { usage: Record<string, number> } & Record<string, number>;
    };
    const shown = await page.$$eval(".figure[data-figure]", (nodes) =>
      Object.fromEntries(
        nodes.map((node) => [node.getAttribute("data-figure"), node.getAttribute("data-value")]),
      ),
    );
    const { usage, ...counts } = report.totals;
    for (const [key, value] of Object.entries({ ...counts, ...usage })) {
      expect(Number(shown[key]), key).toBeCloseTo(value, 12);
    }
    expect(report.totals.items).toBe(ITEMS);
    expect(report.totals.failed).toBe(10);

    const groups = await page.$$eval("tr[data-error-code]", (rows) =>
      rows.map((row) => [row.getAttribute("data-error-code"), Number(row.children[1]?.textContent)]),
    );
    const failedCodes = (await results()).flatMap((line) => (line.error ? [line.error.code] : []));
    expect(groups).toEqual(
      [...new Set(failedCodes)].map((code) => [code, failedCodes.filter((c) => c === code).length]),
    );
    expect(await page.$$eval("[data-event=pause]", (nodes) => nodes.length)).toBe(1);

    // Virtualised: 100 rows in the grid, only those in view built.
    expect(await page.getAttribute(".vt", "aria-rowcount")).toBe(String(ITEMS));
    expect((await visibleRows(page)).length).toBeLessThan(40);
    // Model output is text in the table, not markup.
    expect((await visibleRows(page)).some((row) => row.answer?.includes("done <b>bold</b>"))).toBe(true);
    expect(await page.$$eval(".vt b", (nodes) => nodes.length)).toBe(0);

    const shot = await screenshot(browser, page, "batch-report");
    expect(shot.colours).toBeGreaterThan(12);
    expect(shot.inked).toBeGreaterThan(0.03);
    expect(errors).toEqual([]);
    expect(network).toEqual([]);
    await page.close();
  });

  it("R-V1: the item table sorts by cost both ways, filters by status and text, and a row opens the item's session page with its own figures", async () => {
    const { page, errors } = await openReport(browser, reportPath);
    const lines = await results();
    const byCost = [...lines].sort((a, b) => b.costUsd - a.costUsd);

    await page.click('.vt-header [data-column="cost"]');
    expect(await page.getAttribute('.vt-header [data-column="cost"]', "aria-sort")).toBe("descending");
    const highest = (await visibleRows(page))[0];
    expect(lines.find((line) => line.id === highest?.id)?.costUsd).toBe(byCost[0]?.costUsd);
    await page.click('.vt-header [data-column="cost"]');
    expect(await page.getAttribute('.vt-header [data-column="cost"]', "aria-sort")).toBe("ascending");
    const lowest = (await visibleRows(page))[0];
    expect(lines.find((line) => line.id === lowest?.id)?.costUsd).toBe(byCost.at(-1)?.costUsd);

    await page.selectOption("select[aria-label=status]", "failed");
    expect(await page.getAttribute(".shown", "data-rows")).toBe("10");
    const failed = await visibleRows(page);
    expect(failed.map((row) => row.status)).toEqual(Array(10).fill("failed"));
    expect(new Set(failed.map((row) => row.id))).toEqual(
      new Set(lines.filter((line) => line.status === "failed").map((line) => line.id)),
    );
    await page.selectOption("select[aria-label=status]", "all");
    // Text filters labels (and answers and errors): tasks.jsonl:1, :10 … :19, :100.
    await page.fill("input[type=search]", "tasks.jsonl:1");
    const matching = lines.filter((line) => line.label.includes("tasks.jsonl:1"));
    expect(matching).toHaveLength(12);
    expect(await page.getAttribute(".shown", "data-rows")).toBe("12");
    expect(new Set((await visibleRows(page)).map((row) => row.id))).toEqual(
      new Set(matching.map((line) => line.id)),
    );

    // A row opens the item's session (the dearest item: it read a file, two turns); its context
    // points are its transcript's.
    await page.fill("input[type=search]", "");
    await page.click('.vt-header [data-column="cost"]');
    const [first] = await visibleRows(page);
    expect(first?.status).toBe("succeeded");
    await page.click(`.vt-row[data-key="${first?.id}"]`);
    await page.waitForSelector(".item-view .agent-detail");
    expect(
      await page.evaluate(() => (globalThis as unknown as { location: { hash: string } }).location.hash),
    ).toBe(`#item=${first?.id}`);
    await page.waitForFunction(() =>
      (
        globalThis as unknown as { forkloopReport: { charts: Map<string, unknown> } }
      ).forkloopReport.charts.has("item-context"),
    );
    const points = await page.evaluate(() =>
      (
        globalThis as unknown as {
          forkloopReport: { charts: Map<string, { data: { datasets: { data: { y: number | null }[] }[] } }> };
        }
      ).forkloopReport.charts
        .get("item-context")
        ?.data.datasets[0]?.data.map((point) => point.y),
    );
    const loaded = await loadTranscript(join(batchDir, "transcripts", `${first?.id}-1.fltr`));
    const expected = loaded.records.flatMap((record) => {
      if (record.type !== "message" || record.message.type !== "assistant") return [];
      const usage = record.message.message.usage;
      return [
        usage.input_tokens + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0),
      ];
    });
    expect(expected).toHaveLength(2);
    expect(points).toEqual(expected);
    const shot = await screenshot(browser, page, "batch-item");
    expect(shot.colours).toBeGreaterThan(8);
    // Back to the batch.
    await page.click('.item-view a[href="#"]');
    await page.waitForSelector(".batch:not([hidden])");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("R-V1: each row's item cell is a link to the item's session page that works clicked and opened directly (a copied link, a reload); item cells leave out the shared directory; every column is in view at 1280 px", async () => {
    const { page, errors } = await openReport(browser, reportPath);
    const lines = await results();
    const cells = await page.$$eval('.vt-spacer .vt-row [data-column="label"]', (nodes) =>
      nodes.map((node) => ({
        text: node.textContent,
        href: node.querySelector("a")?.getAttribute("href"),
        key: node.parentElement?.getAttribute("data-key"),
      })),
    );
    expect(cells.length).toBeGreaterThan(5);
    for (const cell of cells) {
      const line = lines.find((candidate) => candidate.id === cell.key);
      expect(cell.href).toBe(`#item=${cell.key}`);
      // The label is "<cwd>/tasks.jsonl:N": the cell shows what tells the items apart.
      expect(line?.label.endsWith(`/${cell.text}`)).toBe(true);
      expect(cell.text).toMatch(/^tasks\.jsonl:\d+$/);
    }

    // No column is cut off: every header cell lies inside the table's box.
    const overflow = await page.evaluate(() => {
      const doc = (globalThis as unknown as { document: Document }).document;
      const table = doc.querySelector(".vt")?.getBoundingClientRect();
      return [...doc.querySelectorAll(".vt-header .vt-cell")].flatMap((cell) => {
        const box = cell.getBoundingClientRect();
        return table && box.right <= table.right + 0.5 ? [] : [cell.textContent];
      });
    });
    expect(overflow).toEqual([]);

    const target = cells.find((cell) => lines.find((line) => line.id === cell.key)?.status === "succeeded");
    const label = lines.find((line) => line.id === target?.key)?.label;
    await page.click(`.vt-row[data-key="${target?.key}"] [data-column="label"] a`);
    await page.waitForSelector(".item-view:not([hidden]) .agent-detail");
    expect(await page.textContent(".item-view h1")).toBe(`Item ${label}`);
    expect(errors).toEqual([]);
    await page.close();

    // The same address in a fresh page shows that item, its charts drawn; back goes to the batch.
    const direct = await openReport(browser, reportPath, target?.href ?? "");
    await direct.page.waitForSelector(".item-view:not([hidden]) .agent-detail");
    expect(await direct.page.textContent(".item-view h1")).toBe(`Item ${label}`);
    expect(await direct.page.isHidden(".batch")).toBe(true);
    const inked = await direct.page.evaluate(() => {
      const chart = (
        globalThis as unknown as { forkloopReport: { charts: Map<string, { canvas: HTMLCanvasElement }> } }
      ).forkloopReport.charts.get("item-context");
      if (!chart) return 0;
      const { width, height } = chart.canvas;
      const pixels = chart.canvas.getContext("2d")?.getImageData(0, 0, width, height).data ?? [];
      let painted = 0;
      for (let index = 3; index < pixels.length; index += 4) if (pixels[index]) painted++;
      return painted / (width * height);
    });
    expect(inked).toBeGreaterThan(0.01);
    await direct.page.click('.item-view a[href="#"]');
    await direct.page.waitForSelector(".batch:not([hidden])");
    expect(direct.errors).toEqual([]);
    await direct.page.close();
  });

  it("R-V1: one damaged item transcript does not cost the batch's report — the item shows its intact part and says it is damaged", async () => {
    const [line] = (await results()).filter((candidate) => candidate.status === "succeeded");
    const transcript = join(batchDir, "transcripts", `${line?.id}-1.fltr`);
    const bytes = await readFile(transcript);
    const size = (await stat(transcript)).size;
    bytes[Math.floor(size / 2)] = (bytes[Math.floor(size / 2)] ?? 0) ^ 0xff;
    await writeFile(transcript, bytes);
    const out = join(dir, "damaged.html");
    const result = await runCliInProcess(["report", "hundred", "--out", out], { cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    const { page, errors } = await openReport(browser, out, `#item=${line?.id}`);
    expect(await page.textContent(".item-view .problem")).toMatch(
      /the transcript is damaged at byte \d+ of \d+: the \d+ records before it are shown/,
    );
    expect(errors).toEqual([]);
    await page.close();
  });
});
