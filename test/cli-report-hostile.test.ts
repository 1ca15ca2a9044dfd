import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliInProcess, type SimHandle, startSimInProcess } from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, launchChromium, type OpenedReport, openReport } from "./support/chromium.js";

/**
 * R-V1, R-S14: report.html (a batch's and a session's) in real headless Chromium, fed this wave's
 * payload classes by the model and the inputs: HTML and script in item prompts and ids, in answers
 * and structured_output, in the file names of a conflict (so in its diff's message), in a tool's
 * name and input; and control characters (ESC sequences, BEL, NUL, a right-to-left override) in
 * each. Every one must be shown as text: no script of theirs runs, no element of theirs is made,
 * and the page makes no request.
 */
const CONTROL = "\u001b[31mRED\u001b[0m\u0007\u202egnp.exe";
const HOSTILE = (n: number) =>
  `</script><script>window.__pwned = ${n}</script><img src=x onerror="window.__pwned = ${n + 100}"><svg onload="window.__pwned = ${n + 200}">${CONTROL}`;
/** A file name both items create (no slash): the second item's change is a conflict naming it. */
const FILE_NAME = `<img src=x onerror="window.__pwned=9">${CONTROL}.txt`;
const TOOL_NAME = `<img src=x onerror="window.__pwned=7">`;

let dir: string;
let sim: SimHandle;
let browser: Browser;
let copies = "";

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-report-hostile-"));
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], {
      cwd: dir,
      stdio: "ignore",
    });
  git("init", "-q", "-b", "main");
  await writeFile(join(dir, "README.md"), "a project\n");
  git("add", "README.md");
  git("commit", "-q", "-m", "init");
  const items = [1, 2].map((n) => JSON.stringify({ id: `item-${n}`, task: HOSTILE(n) }));
  await writeFile(join(dir, "..", `${dir.split("/").pop()}-items.jsonl`), `${items.join("\n")}\n`);
  await writeFile(
    join(dir, "..", `${dir.split("/").pop()}-schema.json`),
    JSON.stringify({
      type: "object",
      properties: { finding: { type: "string" } },
      required: ["finding"],
      additionalProperties: false,
    }),
  );
  // Items run one at a time: each first writes the shared file, then answers (in item order).
  const rules = [
    ...[1, 2].map((n) => ({
      match: { querySource: "batch", lastUserText: `window.__pwned = ${n}<`, turn: 0 },
      reply: {
        content: [
          {
            type: "tool_use",
            name: "Write",
            input: { file_path: FILE_NAME, content: `${HOSTILE(n + 10)}\n` },
          },
        ],
      },
    })),
    ...[1, 2].map((n) => ({
      match: { querySource: "batch", turn: 1 },
      reply: { content: [{ type: "text", text: JSON.stringify({ finding: HOSTILE(n + 20) }) }] },
      times: 1,
    })),
  ];
  const session = [
    {
      match: { querySource: "sdk", turn: 0 },
      reply: {
        content: [
          { type: "tool_use", name: TOOL_NAME, input: { payload: HOSTILE(30) } },
          { type: "tool_use", name: "Read", input: { file_path: "notes.md" } },
        ],
      },
    },
    { match: { querySource: "sdk" }, reply: { content: [{ type: "text", text: HOSTILE(40) }] } },
  ];
  await writeFile(
    join(dir, "..", `${dir.split("/").pop()}-scenario.json`),
    JSON.stringify({ rules: [...rules, ...session] }),
  );
  sim = await startSimInProcess(dir, [
    "--scenario",
    join(dir, "..", `${dir.split("/").pop()}-scenario.json`),
  ]);
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await sim?.stop();
  const base = dir.split("/").pop();
  for (const name of ["items.jsonl", "schema.json", "scenario.json"])
    await rm(join(dir, "..", `${base}-${name}`), { force: true });
  await rm(dir, { recursive: true, force: true });
  // R-B2: the conflict's copy, kept where the batch made its copies (in memory here).
  if (copies !== "") await rm(copies, { recursive: true, force: true });
});

/** What no payload may have done in the page, and the payload text it must show. */
async function judge(opened: OpenedReport, shown: readonly string[]): Promise<void> {
  const { page, errors, network } = opened;
  expect(await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
  // The page's own elements only: no img with src x, no svg with an onload, no inline handler.
  expect(await page.$$eval("img[src='x'], svg[onload], [onerror]", (nodes) => nodes.length)).toBe(0);
  // The report's data script holds the payloads as JSON (`<` escaped); a script of theirs would
  // be an element of its own.
  const scripts = await page.$$eval("script", (nodes) => nodes.map((node) => node.textContent ?? ""));
  expect(scripts.filter((text) => text.trim().startsWith("window.__pwned"))).toEqual([]);
  const text = await page.evaluate(
    // The text as rendered: textContent would also hold the data script, which has every payload.
    // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is what is judged
    () => (globalThis as unknown as { document: { body: { innerText: string } } }).document.body.innerText,
  );
  for (const payload of shown) expect(text).toContain(payload);
  expect(errors).toEqual([]);
  expect(network).toEqual([]);
}

describe("R-V1, R-S14: report.html shows hostile text as text in headless Chromium", () => {
  it("R-V1: a batch report (--isolate, --json-schema) whose item prompts, answers, structured output and conflict file names carry HTML, script and control characters runs none of it", async () => {
    const base = dir.split("/").pop();
    const result = await runCliInProcess(
      [
        "batch",
        "--items",
        join(dir, "..", `${base}-items.jsonl`),
        "--prompt",
        "Do {{item.task}}",
        "--id",
        "hostile",
        "--permission-mode",
        "acceptEdits",
        "--isolate",
        "--concurrency",
        "1",
        "--json-schema",
        join(dir, "..", `${base}-schema.json`),
        "--report",
      ],
      { cwd: dir, env: sim.env },
    );
    copies = /item copies in (\S+)/.exec(result.stderr)?.[1] ?? "";
    // One item's change is a conflict with the other's: some failed (exit 6).
    expect([0, 6], result.stderr).toContain(result.code);
    expect(result.stdout).toContain("conflict");
    const html = /^html: +(.+\.html)$/m.exec(result.stdout)?.[1] ?? "";
    const opened = await openReport(browser, html);
    await opened.page.waitForSelector(".vt-body .vt-cell");
    // The answers as validated structured output, and the conflict's message naming the file.
    await judge(opened, ["window.__pwned = 21", "window.__pwned = 22", 'onerror="window.__pwned=9"']);
    await opened.page.close();
  }, 180_000);

  it("R-V1: a session report whose tool name, tool input and answer carry HTML, script and control characters runs none of it", async () => {
    await writeFile(join(dir, "notes.md"), `${HOSTILE(50)}\n`);
    const result = await runCliInProcess(["run", "Go on", "--report", "--allowed-tools", "Read"], {
      cwd: dir,
      env: sim.env,
    });
    expect(result.code, result.stderr).toBe(0);
    const html = /^report: (.+\.html)$/m.exec(result.stderr)?.[1] ?? "";
    const opened = await openReport(browser, html);
    await judge(opened, ["window.__pwned = 40"]);
    // Control: the same payload put into the page as markup is seen — it runs, or the page's
    // policy refuses it and says so — so the checks above can fail.
    await opened.page.evaluate((markup) => {
      const doc = (
        globalThis as unknown as {
          document: {
            createElement(tag: string): { innerHTML: string };
            body: { append(node: unknown): void };
          };
        }
      ).document;
      const holder = doc.createElement("div");
      holder.innerHTML = markup;
      doc.body.append(holder);
    }, HOSTILE(60));
    // The image's error event comes when the browser gets to it: waited for, up to 10 s.
    let ran: number | undefined;
    for (let attempt = 0; attempt < 100 && ran === undefined && opened.errors.length === 0; attempt++) {
      ran = await opened.page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned);
      if (ran === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(ran !== undefined || opened.errors.length > 0).toBe(true);
    await opened.page.close();
  }, 120_000);
});
