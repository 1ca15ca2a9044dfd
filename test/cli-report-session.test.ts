import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import {
  runCliInProcess,
  type SimHandle,
  sessionsStateDir,
  startSimInProcess,
  writeScenario,
} from "@forkloop/cli/testing";
import { type LoadedTranscript, loadTranscript } from "@forkloop/orchestrator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, launchChromium, openReport, screenshot } from "./support/chromium.js";

// The models file and the windows below are sized for Sonnet 4.6 (its tokenizer), not for run's
// default model (Claude Code's newest Opus, R-X2), so every run names it.
const SONNET = ["--model", "claude-sonnet-4-6"];

// R-V1 "Done when": a REAL run through the CLI against a scripted `forkloop sim` —
// the main agent starts two sub-agents (with extended thinking on), reads a big file (whose
// first line is hostile markup), a missing file (a failed tool) and a PNG (an image), and is
// auto-compacted (a 24k window) — then `forkloop report` and headless Chromium look at the page.

const HOSTILE = `</script><script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">`;

/** A 4×4 RGB PNG (red and blue stripes), made here so the Read tool returns an image block. */
function png(): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (bytes: Buffer) => {
    let c = 0xffffffff;
    for (const byte of bytes) c = (crcTable[(c ^ byte) & 0xff] ?? 0) ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(body));
    return Buffer.concat([length, body, sum]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(4, 0);
  header.writeUInt32BE(4, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const rows = Array.from({ length: 4 }, (_, y) =>
    Buffer.from([0, ...Array.from({ length: 4 }, () => (y % 2 ? [0, 0, 255] : [255, 0, 0])).flat()]),
  );
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(Buffer.concat(rows))),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

let dir: string;
let sim: SimHandle;
let browser: Browser;
let reportPath: string;
let transcript: LoadedTranscript;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-report-session-"));
  const words = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "lambda"];
  const lines = Array.from(
    { length: 400 },
    (_, i) => `line ${i}: ${Array.from({ length: 10 }, (_, j) => words[(i * 7 + j * 3) % 8]).join(" ")}`,
  );
  await writeFile(join(dir, "big.md"), `${HOSTILE}\n# Big notes\n${lines.join("\n")}\n`);
  await writeFile(join(dir, "pixel.png"), png());
  // Effective window 26k: auto-compact at 13k, blocking at 23k; the tool definitions with big.md
  // (~12k tokens) cross the first.
  await writeFile(
    join(dir, "small-window.json"),
    JSON.stringify([{ id: "claude-sonnet-4-6", contextWindow: 30_000, maxOutputTokens: 4_000 }]),
  );
  const scenario = await writeScenario(
    join(dir, "scenario.json"),
    [
      {
        match: { querySource: "compact" },
        reply: {
          content: [{ type: "text", text: "<summary>## Goal\nReview the notes; two reports in.</summary>" }],
        },
      },
      {
        match: { querySource: "session_memory" },
        reply: { content: [{ type: "text", text: "# Notes\nreviewing" }] },
      },
      {
        match: { querySource: "agent:fork" },
        reply: { content: [{ type: "text", text: "sub-agent report: all clear (scripted)" }] },
      },
      {
        match: { querySource: "sdk", lastToolResult: "sub-agent report" },
        reply: {
          content: [
            { type: "tool_use", name: "Read", input: { file_path: "big.md" } },
            { type: "tool_use", name: "Read", input: { file_path: "missing.txt" } },
            { type: "tool_use", name: "Read", input: { file_path: "pixel.png" } },
          ],
        },
      },
      {
        match: { querySource: "sdk", lastUserText: "Start the review" },
        reply: {
          content: [
            { type: "thinking", thinking: "Two scans in parallel, then read the notes." },
            {
              type: "tool_use",
              name: "Agent",
              input: { description: "scan src", prompt: "Scan src/.", subagent_type: "fork" },
            },
            {
              type: "tool_use",
              name: "Agent",
              input: { description: "scan test", prompt: "Scan test/.", subagent_type: "fork" },
            },
          ],
        },
      },
    ],
    "review done (scripted)",
  );
  sim = await startSimInProcess(dir, ["--scenario", scenario]);
  browser = await launchChromium();
  const run = await runCliInProcess(["run", ...SONNET, "Start the review", "--report"], {
    cwd: dir,
    env: { ...sim.env, FORKLOOP_MODELS: "small-window.json", MAX_THINKING_TOKENS: "1024" },
  });
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toContain("review done (scripted)");
  reportPath = /^report: (.+\.html)$/m.exec(run.stderr)?.[1] ?? "";
  const [file] = (await readdir(sessionsStateDir(dir))).filter((name) => name.endsWith(".fltr"));
  transcript = await loadTranscript(join(sessionsStateDir(dir), file ?? ""));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await sim?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** The main agent's replies in the transcript, in order, each once. */
function replies(loaded: LoadedTranscript) {
  const seen = new Set<string>();
  return loaded.records.flatMap((record) => {
    if (record.type !== "message" || record.message.type !== "assistant" || seen.has(record.message.uuid))
      return [];
    seen.add(record.message.uuid);
    return [record.message];
  });
}

type Point = { x: number; y: number | null };
type ChartsWindow = {
  forkloopReport: {
    charts: Map<string, { data: { datasets: { data: Point[] }[] }; options: Record<string, unknown> }>;
  };
  __pwned?: number;
};

describe("forkloop report <session> in headless Chromium (R-V1)", () => {
  it("R-V1: the session report of a run with two sub-agents and one compaction shows both children in the fork tree, context points equal to the transcript's, and the boundary marker; no console error, no network, a non-blank screenshot", async () => {
    const { page, errors, network } = await openReport(browser, reportPath);

    // Fork tree: the main agent with both Agent children (labelled by their calls) and the compact fork.
    const children = await page.$$eval(".fork-tree > li > ul > li", (nodes) =>
      nodes.map((node) => ({
        source: node.getAttribute("data-query-source"),
        label: node.querySelector(".tree-label")?.textContent,
      })),
    );
    const agents = children.filter((child) => child.source === "agent:fork");
    expect(agents.map((child) => child.label).sort()).toEqual(["Agent: scan src", "Agent: scan test"]);
    expect(children.map((child) => child.source)).toContain("compact");

    // The context chart's points are the transcript's own figures: input + cache write + cache read.
    const expected = replies(transcript).map((message) => {
      const usage = message.message.usage;
      return (
        usage.input_tokens + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0)
      );
    });
    expect(expected.length).toBe(3);
    const points = await page.evaluate(
      () =>
        (globalThis as unknown as ChartsWindow).forkloopReport.charts.get("context")?.data.datasets[0]?.data,
    );
    expect(points?.map((point) => point.y)).toEqual(expected);
    expect(points?.map((point) => point.x)).toEqual([1, 2, 3]);

    // The compaction: one boundary after the second request, with the transcript's pre/post tokens,
    // drawn on the chart between requests 2 and 3.
    const boundary = transcript.records.flatMap((record) =>
      record.type === "message" &&
      record.message.type === "system" &&
      record.message.subtype === "compact_boundary"
        ? [record.message]
        : [],
    );
    expect(boundary).toHaveLength(1);
    const marker = await page.$eval(".marker[data-marker=compact_boundary]", (node) => ({
      after: node.getAttribute("data-after-request"),
      pre: node.getAttribute("data-pre-tokens"),
      post: node.getAttribute("data-post-tokens"),
    }));
    expect(marker).toEqual({
      after: "2",
      pre: String(boundary[0]?.compactMetadata?.preTokens),
      post: String(boundary[0]?.compactMetadata?.postTokens),
    });
    const drawn = await page.evaluate(() => {
      const plugins = (globalThis as unknown as ChartsWindow).forkloopReport.charts.get("context")?.options
        .plugins as { forkloopAnnotations: { lines: { x: number }[] } } | undefined;
      return plugins?.forkloopAnnotations.lines ?? [];
    });
    expect(drawn.map((line) => line.x)).toEqual([2.5]);

    const shot = await screenshot(browser, page, "session-report");
    expect(shot.colours).toBeGreaterThan(12);
    expect(shot.inked).toBeGreaterThan(0.03);
    expect(errors).toEqual([]);
    expect(network).toEqual([]);
    await page.close();
  });

  it("R-V1: thinking blocks, an image and a failed tool render with no console error; hostile tool output stays text and never runs", async () => {
    const { page, errors } = await openReport(browser, reportPath);
    // Open every message: their blocks are built on first open.
    await page.$$eval(".messages details.message", (nodes) => {
      for (const node of nodes) (node as unknown as { open: boolean }).open = true;
    });
    await page.waitForSelector(".block.thinking");
    expect(
      await page.$$eval(".block.thinking", (nodes) => nodes.map((node) => node.textContent)),
    ).toContainEqual(expect.stringContaining("Two scans in parallel"));
    const image = await page.$eval("img.block.image", (node) => {
      const img = node as unknown as { naturalWidth: number; complete: boolean; src: string };
      return { width: img.naturalWidth, complete: img.complete, src: img.src.slice(0, 22) };
    });
    expect(image).toEqual({ width: 4, complete: true, src: "data:image/png;base64," });
    expect(
      await page.$$eval("table.tools tr.status-error td:nth-child(2)", (cells) =>
        cells.map((cell) => cell.textContent),
      ),
    ).toEqual(["Read"]);
    expect(await page.$$eval(".tool-result.is-error", (nodes) => nodes.length)).toBe(1);
    // The failed Read took milliseconds of a run of seconds: its red bar is still drawn, wide enough to see.
    const errorBars = await page.evaluate(() => {
      type BarChart = {
        data: { datasets: { label: string }[] };
        getDatasetMeta(index: number): { data: { width: number }[] };
      };
      const chart = (
        globalThis as unknown as { forkloopReport: { charts: Map<string, BarChart> } }
      ).forkloopReport.charts.get("timeline");
      const index = chart?.data.datasets.findIndex((dataset) => dataset.label === "tool error") ?? -1;
      return chart?.getDatasetMeta(index).data.map((bar) => bar.width) ?? [];
    });
    expect(errorBars).toHaveLength(1);
    expect(errorBars[0]).toBeGreaterThanOrEqual(2);

    // The hostile first line of big.md is in the page as text, and nothing of it ran or loaded.
    const text = await page.evaluate(
      () =>
        (globalThis as unknown as { document: { body: { textContent: string } } }).document.body.textContent,
    );
    expect(text).toContain(HOSTILE);
    expect(await page.evaluate(() => (globalThis as unknown as ChartsWindow).__pwned)).toBeUndefined();
    expect(
      await page.$$eval("img", (nodes) => nodes.filter((node) => node.getAttribute("src") === "x").length),
    ).toBe(0);

    // A child's page: its own figures, and most of its first request read from the parent's cache.
    await page.click('.fork-tree li[data-query-source="agent:fork"] > .tree-node');
    const share = await page.$eval('.agent-detail [data-figure="firstRequestCacheShare"]', (node) =>
      Number(node.getAttribute("data-value")),
    );
    expect(share).toBeGreaterThan(0.5);
    const shot = await screenshot(browser, page, "session-report-child");
    expect(shot.colours).toBeGreaterThan(12);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("R-V1: `forkloop report <session-id> --open --out FILE` writes the page there and starts $BROWSER with it; an unknown id is exit 2 naming where it looked", async () => {
    const opened = join(dir, "opened.txt");
    const opener = join(dir, "opener.sh");
    // Written aside and renamed: the file appears whole (the shell's `>` creates it empty first).
    await writeFile(
      opener,
      `#!/bin/sh\nprintf '%s' "$1" > '${opened}.part' && mv '${opened}.part' '${opened}'\n`,
      {
        mode: 0o755,
      },
    );
    const result = await runCliInProcess(
      ["report", transcript.start?.sessionId ?? "", "--open", "--out", "copy.html"],
      {
        cwd: dir,
        env: { BROWSER: opener },
      },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe(join(dir, "copy.html"));
    for (let attempt = 0; attempt < 100 && !existsSync(opened); attempt++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await readFile(opened, "utf8")).toBe(join(dir, "copy.html"));
    expect(await readFile(join(dir, "copy.html"), "utf8")).toContain(
      '<script type="application/json" id="report-data">',
    );

    const unknown = await runCliInProcess(["report", "s-nope"], { cwd: dir });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(
      /"s-nope" is neither a session in .+ nor a batch in .+forkloop sessions list/,
    );
  });

  it("R-V1: a file that holds no session (garbage, empty) or a directory is exit 2 naming it; a damaged fork transcript is shown as damaged and the rest of the session's page is kept", async () => {
    await writeFile(
      join(dir, "garbage.fltr"),
      Buffer.from("not a transcript at all, just bytes\n".repeat(8)),
    );
    await writeFile(join(dir, "empty.fltr"), "");
    await mkdir(join(dir, "folder.fltr"), { recursive: true });
    const cases = [
      ["garbage.fltr", /garbage\.fltr holds no forkloop session \(no session_start record\)/],
      ["empty.fltr", /empty\.fltr holds no forkloop session/],
      ["folder.fltr", /folder\.fltr is a directory, not a transcript file/],
    ] as const;
    const refused = await Promise.all(
      cases.map(([file]) => runCliInProcess(["report", file, "--out", "never.html"], { cwd: dir })),
    );
    cases.forEach(([file, message], index) => {
      expect(refused[index]?.code, file).toBe(2);
      expect(refused[index]?.stderr).toMatch(message);
    });
    expect(existsSync(join(dir, "never.html"))).toBe(false);

    // A copy of the session whose first Agent fork's transcript is damaged midway.
    const sessionId = transcript.start?.sessionId ?? "";
    const copy = join(dir, "damaged-copy");
    await mkdir(copy, { recursive: true });
    await cp(join(sessionsStateDir(dir), `${sessionId}.fltr`), join(copy, `${sessionId}.fltr`));
    await cp(join(sessionsStateDir(dir), sessionId), join(copy, sessionId), { recursive: true });
    const agents = join(copy, sessionId, "agents");
    const [fork] = (await readdir(agents)).filter((name) => name.startsWith("agent-")).sort();
    const bytes = await readFile(join(agents, fork ?? ""));
    const middle = Math.floor(bytes.length / 2);
    bytes[middle] = (bytes[middle] ?? 0) ^ 0xff;
    await writeFile(join(agents, fork ?? ""), bytes);
    const result = await runCliInProcess(
      ["report", join(copy, `${sessionId}.fltr`), "--out", "damaged.html"],
      {
        cwd: dir,
      },
    );
    expect(result.code, result.stderr).toBe(0);

    const { page, errors } = await openReport(browser, join(dir, "damaged.html"));
    // Every fork is still in the tree; the damaged one says so on its page.
    expect(await page.$$eval(".fork-tree > li > ul > li", (nodes) => nodes.length)).toBe(
      transcript.records.filter((record) => record.type === "sub_agent").length,
    );
    const id = fork?.replace(/\.fltr$/, "");
    await page.click(`.fork-tree li[data-agent-id="${id}"] > .tree-node`);
    expect(await page.textContent(".agent-detail .problem")).toMatch(
      /the transcript is damaged at byte \d+ of \d+: the \d+ records before it are shown/,
    );
    expect(errors).toEqual([]);
    await page.close();
  });
});
