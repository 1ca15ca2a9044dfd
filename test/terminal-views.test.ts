import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type CliResult,
  runCliInProcess,
  type SimHandle,
  startSimInProcess,
  streamJsonLines,
  writeScenario,
} from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * R-S14: forkloop's own views show text from files, tool output, file names and the model with
 * their control characters escaped — `sessions list` and `show`, `replay`, batch progress lines and
 * its summary, `batch status`, the report path `report` prints, and status lines on stderr — while
 * `run` prints the model's answer in text mode as it is (apps/cli/README.md). Each view runs twice
 * in-process: as shipped, and as a control with the escaping off (`terminalViews: false`, what
 * printed before), which must show the raw bytes: the hostile text really reaches that view.
 */
/** What a checkout can hold: OSC 52 (write the clipboard), C1 CSI, a bidi override, BEL. */
const DIR_NAME = "proj-\x1b]52;c;ZXZpbA==\x07-\u009b2J-\u202egnp";
/** A file name: clear the screen, an OSC 8 link hiding its target, backspaces, a carriage return. */
const FILE_NAME = "\x1b[2J\x1b]8;;x:evil\x07notes\x1b]8;;\x07\x08\x08\rsafe.ts";
/** The file's content, the model's reply: a line rewritten in place, a hidden SGR, 8-bit OSC. */
const CONTENT = "ok\r\x1b[8mhidden\x1b[0m \u009d52;c;x\u009c \u2066isolated\u2069";

// biome-ignore lint/suspicious/noControlCharactersInRegex: these characters are what the tests look for
const ACTS_ON_TERMINAL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/;

let dir: string;
let sim: SimHandle;
let sessionId: string;

beforeAll(async () => {
  const parent = await mkdtemp(join(tmpdir(), "forkloop-terminal-views-"));
  dir = join(parent, DIR_NAME);
  await mkdir(join(dir, "src"), { recursive: true });
  await writeFile(join(dir, "src", FILE_NAME), `${CONTENT}\n`);
  const scenario = await writeScenario(
    join(dir, "scenario.json"),
    [
      {
        match: { turn: 0, lastUserText: "Read the file" },
        reply: {
          content: [{ type: "tool_use", name: "Read", input: { file_path: join(dir, "src", FILE_NAME) } }],
        },
      },
    ],
    `the simulator's scripted answer: ${CONTENT}`,
  );
  sim = await startSimInProcess(dir, ["--scenario", scenario]);
  const first = await cli(["run", `Read the file ${CONTENT}`, "--output-format", "stream-json"]);
  expect(first.code, first.stderr).toBe(0);
  sessionId = streamJsonLines(first.stdout).at(-1)?.session_id ?? "";
  const batch = await cli([
    "batch",
    "--files",
    "src/*.ts",
    "--prompt",
    "Summarize {{file}}",
    "--id",
    "views",
  ]);
  expect(batch.code, batch.stderr).toBe(0);
}, 120_000);

afterAll(async () => {
  await sim?.stop();
  await rm(join(dir, ".."), { recursive: true, force: true });
});

function cli(args: readonly string[], terminalViews = true): Promise<CliResult> {
  return runCliInProcess(args, { cwd: dir, env: sim.env, terminalViews });
}

/**
 * The view escaped as shipped, and the control (escaping off) showing the raw bytes of `raw`;
 * `args` may depend on which of the two runs it is (a batch needs an id of its own).
 */
async function escapedView(
  args: readonly string[] | ((control: boolean) => readonly string[]),
  stream: "stdout" | "stderr",
  raw: string,
): Promise<string> {
  const argsFor = typeof args === "function" ? args : () => args;
  const shown = await cli(argsFor(false));
  const before = await cli(argsFor(true), false);
  expect(before[stream], "control: the hostile bytes reach this view").toContain(raw);
  expect(shown[stream]).not.toMatch(ACTS_ON_TERMINAL);
  expect(shown.stderr).not.toMatch(ACTS_ON_TERMINAL);
  return shown[stream];
}

describe("R-S14: forkloop's views escape control characters; a control shows the raw bytes before", () => {
  it("sessions list: the first prompt (file content piped in as a prompt) and the directory", async () => {
    const shown = await escapedView(["sessions", "list"], "stdout", "\u009d52;c;x");
    expect(shown).toContain("\\u009d52;c;x");
  });

  it("sessions show: the tool call, the file in the tool result, the model's reply, the cwd", async () => {
    const shown = await escapedView(["sessions", "show", sessionId], "stdout", "\x1b[8mhidden");
    expect(shown).toContain("\\u001b[8mhidden");
    expect(shown).toContain("\\u009d52;c;x\\u009c");
    expect(shown).toContain("\\u001b]52;c;ZXZpbA==\\u0007");
    expect(shown).toContain("\\u2066isolated\\u2069");
  });

  it("replay: the same transcript turn by turn", async () => {
    const shown = await escapedView(["replay", sessionId], "stdout", "\x1b[8mhidden");
    expect(shown).toContain("\\u001b[8mhidden");
  });

  it("batch progress lines (item labels from file names) and its summary with the report path", async () => {
    const batch = (id: string) => (control: boolean) => [
      ...["batch", "--files", "src/*.ts", "--prompt", "Summarize {{file}}"],
      ...["--id", `${id}${control ? "-control" : ""}`],
    ];
    const progress = await escapedView(batch("progress"), "stderr", FILE_NAME);
    expect(progress).toContain("\\u001b[2J");
    const summary = await escapedView(batch("summary"), "stdout", DIR_NAME);
    expect(summary).toMatch(/^report: .*\\u001b\]52;c;ZXZpbA==\\u0007.*report\.md$/m);
  });

  it("batch status: the prompt, the state and report paths", async () => {
    await escapedView(["batch", "status", "views"], "stdout", DIR_NAME);
  });

  it("report: the path it wrote", async () => {
    const shown = await escapedView(["report", sessionId], "stdout", DIR_NAME);
    expect(shown).toContain("\\u009b2J");
  });

  it("status lines on stderr: run --verbose's tool call line and its report hint", async () => {
    const stderr = await escapedView(["run", "Read the file", "--verbose"], "stderr", "\u202egnp");
    expect(stderr).toMatch(/^→ Read .*\\u202egnp/m);
  });

  it("run in text mode prints the model's answer as it is (the README says so)", async () => {
    const result = await cli(["run", "answer me"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(CONTENT);
  });
});
